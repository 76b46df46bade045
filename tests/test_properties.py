"""Property-based tests (hypothesis): invariances every convention must have."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import oracles
import precall

METHODS = oracles.METHODS
TIES = ("group", "stable")
GRIDS = ("reference", "exact")
TOL = {m: 1e-11 for m in METHODS}
TOL["interpolated"] = 1e-7

SETTINGS = dict(deadline=None)  # max_examples from the profile in conftest.py (40; HYPOTHESIS_PROFILE=precall-thorough: 400)


@st.composite
def binary_data(draw, min_n=2, max_n=25, n_scores=6, weighted=None, allow_zero_weight=True):
    """(y, integer scores, integer weights or None), with positive and negative weight > 0."""
    n = draw(st.integers(min_n, max_n))
    y = np.asarray(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    s = np.asarray(draw(st.lists(st.integers(0, n_scores - 1), min_size=n, max_size=n)))
    if weighted is None:
        weighted = draw(st.booleans())
    w = None
    if weighted:
        lo = 0 if allow_zero_weight else 1
        w = np.asarray(draw(st.lists(st.integers(lo, 3), min_size=n, max_size=n)))
    wt = np.ones(n) if w is None else w
    assume(wt[y == 1].sum() > 0 and wt[y == 0].sum() > 0)
    return y, s, w


def _all_scores(y, s, w=None, ties="group", grid="reference"):
    out = {
        m: precall.average_precision(y, s, method=m, ties=ties, sample_weight=w, recall_grid=grid)
        for m in METHODS
    }
    out["roc_auc"] = precall.roc_auc(y, s, sample_weight=w)
    return out


def _assert_same(a, b, tol=1e-12):
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == pytest.approx(b[k], abs=TOL.get(k, tol), rel=0), (k, a[k], b[k])


# ------------------------------------------------------------ vs the oracle
@settings(**SETTINGS)
@given(data=binary_data(), ties=st.sampled_from(TIES), grid=st.sampled_from(GRIDS))
def test_every_method_matches_oracle(data, ties, grid):
    y, s, w = data
    s = s / 5.0
    for m in METHODS:
        got = precall.average_precision(y, s, method=m, ties=ties, sample_weight=w, recall_grid=grid)
        exp = oracles.average_precision(y, s, m, ties, sample_weight=w, recall_grid=grid)
        assert got == pytest.approx(exp, abs=TOL[m]), m
    assert precall.roc_auc(y, s, sample_weight=w) == pytest.approx(
        oracles.roc_auc_pairwise(y, s, w), rel=1e-12
    )


@settings(**SETTINGS)
@given(data=binary_data(), ties=st.sampled_from(TIES))
def test_table_matches_oracle(data, ties):
    y, s, w = data
    t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
    pts = oracles.operating_points(y, s, w, ties=ties)
    np.testing.assert_array_equal(t.thresholds, pts.thresholds)
    np.testing.assert_array_equal(t.tp, pts.tp)
    np.testing.assert_array_equal(t.fp, pts.fp)
    assert t.n_pos == pts.n_pos and t.n_neg == pts.n_neg
    np.testing.assert_array_equal(t.tp + t.fn, np.full(len(t), pts.n_pos))
    np.testing.assert_array_equal(t.fp + t.tn, np.full(len(t), pts.n_neg))


# --------------------------------------------------------- permutations
@settings(**SETTINGS)
@given(data=binary_data(), perm_seed=st.integers(0, 2**32 - 1), grid=st.sampled_from(GRIDS))
def test_permutation_invariance_group(data, perm_seed, grid):
    y, s, w = data
    perm = np.random.default_rng(perm_seed).permutation(len(y))
    a = _all_scores(y, s, w, "group", grid)
    b = _all_scores(y[perm], s[perm], None if w is None else w[perm], "group", grid)
    _assert_same(a, b)
    for max_fpr in (0.3, 0.8):
        assert precall.roc_auc(y, s, sample_weight=w, max_fpr=max_fpr) == pytest.approx(
            precall.roc_auc(y[perm], s[perm], sample_weight=None if w is None else w[perm], max_fpr=max_fpr),
            abs=1e-12,
        )


# ------------------------------------------------- monotone transforms
_TRANSFORMS = {
    "exp": lambda k: np.exp(k.astype(float)),
    "3x+1": lambda k: 3.0 * k + 1.0,
    "negative-shift": lambda k: k.astype(float) - 1000.5,
    "log1p": lambda k: np.log1p(k.astype(float)),
    "int": lambda k: 7 * k - 3,  # integer dtype
}


@settings(**SETTINGS)
@given(
    data=binary_data(n_scores=8),
    ties=st.sampled_from(TIES),
    name=st.sampled_from(sorted(_TRANSFORMS)),
    table_seed=st.integers(0, 2**32 - 1),
)
def test_strictly_increasing_transform_invariance(data, ties, name, table_seed):
    y, k, w = data  # k: integer scores 0..7
    # two strictly increasing maps of the integer scores: a formula and a random lookup table
    f = _TRANSFORMS[name]
    lookup = np.cumsum(np.random.default_rng(table_seed).integers(1, 1000, 8)) / 997.0
    assert np.all(np.diff(f(np.arange(8))) > 0) and np.all(np.diff(lookup) > 0)
    base = _all_scores(y, k / 7.0, w, ties)
    _assert_same(base, _all_scores(y, f(k), w, ties))
    _assert_same(base, _all_scores(y, lookup[k], w, ties))
    # the table's counts do not change either; its thresholds are the mapped ones
    t0 = precall.threshold_table(y, k, sample_weight=w, ties=ties)
    t1 = precall.threshold_table(y, lookup[k], sample_weight=w, ties=ties)
    np.testing.assert_array_equal(t0.tp, t1.tp)
    np.testing.assert_array_equal(t0.fp, t1.fp)
    np.testing.assert_array_equal(lookup[t0.thresholds], t1.thresholds)


# ------------------------------------------ integer weights == repeated rows
@settings(**SETTINGS)
@given(
    data=binary_data(weighted=True),
    grid=st.sampled_from(GRIDS),
    perm_seed=st.integers(0, 2**32 - 1),
)
def test_integer_weights_equal_repeated_rows_group(data, grid, perm_seed):
    y, s, w = data
    s = s / 5.0
    yr, sr = np.repeat(y, w), np.repeat(s, w)
    weighted = _all_scores(y, s, w.astype(float), "group", grid)
    _assert_same(weighted, _all_scores(yr, sr, None, "group", grid))
    # for ties="group" the position of the copies does not matter
    perm = np.random.default_rng(perm_seed).permutation(len(yr))
    _assert_same(weighted, _all_scores(yr[perm], sr[perm], None, "group", grid))
    # the tables agree too (weighted counts are float, repeated counts int)
    tw = precall.threshold_table(y, s, sample_weight=w.astype(float))
    tr = precall.threshold_table(yr, sr)
    np.testing.assert_array_equal(tw.thresholds, tr.thresholds)
    np.testing.assert_array_equal(tw.tp, tr.tp)
    np.testing.assert_array_equal(tw.fp, tr.fp)


# Conventions that only look at the precision envelope / the straight-line
# interpolation are unchanged when one weighted sample becomes w adjacent copies.
# "step" and "trapezoid" are not: with ties="stable" a weight-2 positive is ONE
# operating point, while two copies add an intermediate point of lower precision
# (e.g. negative then positive of weight 2, tied: step 2/3 vs 7/12).
STABLE_WEIGHT_INVARIANT = ("voc2007", "voc2010", "coco", "interpolated", "roc_auc")


@settings(**SETTINGS)
@given(data=binary_data(weighted=True), grid=st.sampled_from(GRIDS))
def test_integer_weights_equal_repeated_rows_stable(data, grid):
    y, s, w = data
    s = s / 5.0
    # repeated rows placed adjacently, in input order
    yr, sr = np.repeat(y, w), np.repeat(s, w)
    weighted = _all_scores(y, s, w.astype(float), "stable", grid)
    repeated = _all_scores(yr, sr, None, "stable", grid)
    _assert_same(
        {k: weighted[k] for k in STABLE_WEIGHT_INVARIANT},
        {k: repeated[k] for k in STABLE_WEIGHT_INVARIANT},
    )
    # the weighted table is the repeated one sampled at the last copy of each row
    tw = precall.threshold_table(y, s, sample_weight=w.astype(float), ties="stable")
    tr = precall.threshold_table(yr, sr, ties="stable")
    keep = np.flatnonzero(w > 0)
    order = keep[oracles._stable_descending_order(list(s[keep]))]
    ends = np.cumsum(w[order]) - 1
    np.testing.assert_array_equal(tw.thresholds, tr.thresholds[ends])
    np.testing.assert_array_equal(tw.tp, tr.tp[ends])
    np.testing.assert_array_equal(tw.fp, tr.fp[ends])
    # and the oracle says the same for every method
    for m in METHODS:
        assert weighted[m] == pytest.approx(
            oracles.average_precision(y, s, m, "stable", sample_weight=w.astype(float), recall_grid=grid),
            abs=TOL[m],
        )


def test_stable_weight_is_one_operating_point():
    # tied negative (w=1) then positive (w=2): one point per sample -> step = 2/3;
    # as three rows (neg, pos, pos) the step AP is 1/2 * 1/2 + 1/2 * 2/3 = 7/12.
    y, s, w = [0, 1], [0.5, 0.5], [1.0, 2.0]
    assert precall.average_precision(y, s, ties="stable", sample_weight=w) == pytest.approx(2 / 3)
    assert precall.average_precision([0, 1, 1], [0.5] * 3, ties="stable") == pytest.approx(7 / 12)


# ---------------------------------------------------------------- ranges
@settings(**SETTINGS)
@given(
    data=binary_data(max_n=40),
    ties=st.sampled_from(TIES),
    grid=st.sampled_from(GRIDS),
    max_fpr=st.sampled_from([None, 0.05, 0.3, 0.77, 1.0]),
)
def test_every_result_in_unit_interval(data, ties, grid, max_fpr):
    y, s, w = data
    vals = _all_scores(y, s, w, ties, grid)
    vals["partial"] = precall.roc_auc(y, s, sample_weight=w, max_fpr=max_fpr)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev = precall.evaluate(y, s, sample_weight=w, ties=ties, recall_grid=grid)
    for m, v in ev.average_precision.items():
        vals["ev_" + m] = v
    vals["ev_roc"] = ev.roc_auc
    vals["ev_f1"] = ev.best_f1.f1
    vals["ev_prevalence"] = ev.prevalence
    for k, v in vals.items():
        assert np.isfinite(v), k
        # 1 ulp above 1 allowed: Detectron's ap += p / 11. gives 1.0000000000000002
        assert -1e-12 <= v <= 1.0 + 1e-12, (k, v)


@settings(**SETTINGS)
@given(n_pos=st.integers(1, 15), n_neg=st.integers(0, 15), ties=st.sampled_from(TIES))
def test_perfect_ranking_gives_one(n_pos, n_neg, ties):
    y = np.array([1] * n_pos + [0] * n_neg)
    s = np.linspace(1.0, 0.0, len(y))
    for m in METHODS:
        assert precall.average_precision(y, s, method=m, ties=ties) == pytest.approx(1.0, abs=1e-12), m
    if n_neg:
        assert precall.roc_auc(y, s) == 1.0
        assert precall.roc_auc(y, -s) == 0.0


@settings(**SETTINGS)
@given(data=binary_data())
def test_roc_auc_reversal(data):
    y, s, w = data
    a = precall.roc_auc(y, s, sample_weight=w)
    b = precall.roc_auc(y, -s, sample_weight=w)
    assert a + b == pytest.approx(1.0, abs=1e-12)
    # swapping the roles of the classes is the same as reversing the scores
    c = precall.roc_auc(1 - y, s, sample_weight=w)
    assert c == pytest.approx(b, abs=1e-12)


# ------------------------------------------------- stable == group without ties
@settings(**SETTINGS)
@given(
    data=binary_data(max_n=30, n_scores=1000),
    grid=st.sampled_from(GRIDS),
)
def test_stable_equals_group_without_ties(data, grid):
    y, s, w = data
    _, first = np.unique(s, return_index=True)
    keep = np.sort(first)  # drop duplicated scores
    y, s = y[keep], s[keep]
    w = None if w is None else w[keep]
    wt = np.ones(len(y)) if w is None else w
    assume(wt[y == 1].sum() > 0 and wt[y == 0].sum() > 0)
    s = s / 999.0
    if w is not None:
        # zero-weight rows are not thresholds; drop them so the stable table has no
        # rows that the group table lacks
        assume(np.all(w > 0))
    g = _all_scores(y, s, w, "group", grid)
    st_ = _all_scores(y, s, w, "stable", grid)
    _assert_same(g, st_)
    tg = precall.threshold_table(y, s, sample_weight=w, ties="group")
    ts = precall.threshold_table(y, s, sample_weight=w, ties="stable")
    np.testing.assert_array_equal(tg.thresholds, ts.thresholds)
    np.testing.assert_array_equal(tg.tp, ts.tp)
    np.testing.assert_array_equal(tg.fp, ts.fp)


@settings(**SETTINGS)
@given(data=binary_data(), ties=st.sampled_from(TIES))
def test_evaluate_consistent_with_functions(data, ties):
    y, s, w = data
    ev = precall.evaluate(y, s, sample_weight=w, ties=ties)
    for m in METHODS:
        assert ev.average_precision[m] == pytest.approx(
            precall.average_precision(y, s, method=m, ties=ties, sample_weight=w), abs=1e-13
        )
    assert ev.roc_auc == pytest.approx(precall.roc_auc(y, s, sample_weight=w), abs=1e-13)
    best, _ = oracles.best_f1(oracles.operating_points(y, s, w, ties=ties))
    assert ev.best_f1.f1 == pytest.approx(best, abs=1e-12)


# ------------------------------------------ hand-built (detection-style) tables
@st.composite
def count_tables(draw):
    ties = draw(st.sampled_from(TIES))
    rows = draw(st.integers(1, 20))
    steps = draw(
        st.lists(
            st.tuples(st.integers(0, 3), st.integers(0, 3)).filter(lambda t: t != (0, 0)),
            min_size=rows,
            max_size=rows,
        )
    )
    tp = np.cumsum([a for a, _ in steps])
    fp = np.cumsum([b for _, b in steps])
    missed = draw(st.integers(0, 5))  # ground truths never detected
    assume(tp[-1] + missed > 0)
    if ties == "group":
        thresholds = np.linspace(1.0, 0.0, rows + 1)[:-1]
    else:
        thresholds = np.sort(np.asarray(draw(st.lists(st.integers(0, 4), min_size=rows, max_size=rows))))[::-1] / 4.0
    return ties, thresholds, tp, fp, int(tp[-1] + missed), int(fp[-1] + draw(st.integers(0, 3)))


@settings(**SETTINGS)
@given(table=count_tables(), grid=st.sampled_from(GRIDS))
def test_hand_built_table_every_method_vs_oracle(table, grid):
    ties, thresholds, tp, fp, n_pos, n_neg = table
    t = precall.ThresholdTable(thresholds=thresholds, tp=tp, fp=fp, n_pos=n_pos, n_neg=n_neg, ties=ties)
    pts = oracles.Points(list(thresholds), [int(v) for v in tp], [int(v) for v in fp], n_pos, n_neg)
    for m in METHODS:
        exp = oracles._AP[m](pts, grid=grid) if m in ("voc2007", "coco") else oracles._AP[m](pts)
        got = t.average_precision(method=m, recall_grid=grid)
        assert got == pytest.approx(exp, abs=TOL[m]), m
    np.testing.assert_allclose(t.recall, np.asarray(tp) / n_pos)
    np.testing.assert_array_equal(t.fn, n_pos - tp)
    np.testing.assert_array_equal(t.tn, n_neg - fp)
