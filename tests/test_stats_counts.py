"""``resample="counts"``: replicates drawn as multinomial cell counts (exact, or over score blocks).

The counts of a stratified row bootstrap are multinomial per stratum, so the
counts path must reproduce the row path's distribution; blocking is an
approximation whose spread must stay within a few percent of the exact one.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import precall
from precall import stats
from precall.stats import _resample

METRICS = [functools.partial(precall.average_precision, method=m) for m in precall.AP_METHODS] + [precall.roc_auc]


def _data(n: int, seed: int = 0, rounded: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    a = y + rng.normal(size=n)
    b = 0.8 * a + 0.6 * rng.normal(size=n)
    if rounded:  # many ties
        a, b = np.round(a, 1), np.round(b, 1)
    return y, a, b


def test_cell_counts_have_the_row_bootstraps_moments():
    y, a, _ = _data(400, rounded=True)
    col = _resample.rank_column(a, y == 1, "group")
    design = _resample.count_design([col], y.astype(np.int64), 1 << 15)
    assert design.exact
    rng = np.random.default_rng(0)
    counts = np.concatenate(list(_resample.draw_counts(rng, design, 20000)))
    for cells in design.stratum_cells:  # every replicate keeps each stratum's size
        assert (counts[:, cells].sum(axis=1) == design.size[cells].sum()).all()
        total = design.size[cells].sum()
        p = design.size[cells] / total
        np.testing.assert_allclose(counts[:, cells].mean(axis=0), design.size[cells], rtol=0.03, atol=0.05)
        np.testing.assert_allclose(counts[:, cells].var(axis=0), total * p * (1 - p), rtol=0.1, atol=0.05)
    # the same counts as the row bootstrap would give: a row's cell is its stratum and run
    steps = _resample.cell_steps(design, design.size[None, :])[0]
    exact = precall.average_precision(y, a)
    assert precall._core.conventions.ap(steps, "step", "reference")[0] == pytest.approx(exact, abs=1e-12)


@pytest.mark.parametrize("stratified", [True, False])
def test_counts_replicates_are_distributed_as_the_row_bootstrap(stratified):
    y, a, _ = _data(3000, seed=1, rounded=True)
    kwargs = {"n_resamples": 4000, "stratified": stratified}
    rows = stats.bootstrap_cis(METRICS, y, a, random_state=1, **kwargs, resample="rows")
    counts = stats.bootstrap_cis(METRICS, y, a, random_state=2, resample="counts", **kwargs)
    for r, c in zip(rows, counts):
        assert c.resample == "counts" and c.n_blocks is None and r.resample == "rows"
        se = r.standard_error / np.sqrt(4000)
        assert abs(np.nanmean(r.replicates) - np.nanmean(c.replicates)) < 4 * np.sqrt(2) * se, c.metric
        assert c.standard_error == pytest.approx(r.standard_error, rel=0.08), c.metric


def test_one_draw_for_many_metrics_equals_one_metric_at_a_time():
    """The metrics share the draws and each ranked column's counted steps (rows: counted once
    a block for every metric); each still equals its own bootstrap bit for bit."""
    y, a, _ = _data(500, seed=2)
    for resample, method in (("rows", "percentile"), ("counts", "percentile"), ("rows", "bca")):
        many = stats.bootstrap_cis(METRICS, y, a, n_resamples=200, random_state=3, resample=resample,
                                   method=method)
        for m, got in zip(METRICS, many):
            one = stats.bootstrap_ci(m, y, a, n_resamples=200, random_state=3, resample=resample, method=method)
            np.testing.assert_array_equal(got.replicates, one.replicates)
            assert (got.low, got.high) == (one.low, one.high)
    rng = np.random.default_rng(4)
    yc, sc = rng.integers(0, 3, 300), np.round(rng.random((300, 3)), 2)  # multi-class macro, rows
    macro = [functools.partial(precall.average_precision, method=m, average="macro") for m in precall.AP_METHODS]
    many = stats.bootstrap_cis(macro, yc, sc, n_resamples=100, random_state=5, resample="rows")
    for m, got in zip(macro, many):
        np.testing.assert_array_equal(got.replicates, stats.bootstrap_ci(m, yc, sc, n_resamples=100,
                                                                         random_state=5, resample="rows").replicates)


def test_blocked_bootstrap_spread_is_within_a_few_percent_of_the_exact_one():
    y, a, _ = _data(20000, seed=3)
    metrics = [METRICS[0], METRICS[1], METRICS[-1]]  # step, voc2007 (decided at the top), ROC-AUC
    exact, blocked = [], []
    for seed in range(4):
        exact.append([r.standard_error for r in stats.bootstrap_cis(
            metrics, y, a, n_resamples=2000, random_state=seed, resample="counts", max_cells=1 << 15)])
        res = stats.bootstrap_cis(metrics, y, a, n_resamples=2000, random_state=seed + 10, resample="counts",
                                  max_cells=2048)
        blocked.append([r.standard_error for r in res])
    assert exact and res[0].n_blocks is not None and res[0].n_blocks < 2048
    assert "score blocks" in res[0].resampling
    ratio = np.mean(blocked, axis=0) / np.mean(exact, axis=0)
    assert np.all(np.abs(ratio - 1) < 0.04), dict(zip([r.metric for r in res], ratio.round(3)))
    for r, m in zip(res, metrics):  # the interval sits on the exact estimate
        assert r.estimate == m(y, a)
        assert r.low < r.estimate < r.high
        assert (r.low, r.high) == tuple(np.quantile(r.replicates, [0.025, 0.975]))


def test_blocked_paired_replicates_keep_the_pairing():
    y, a, b = _data(20000, seed=4)
    same = stats.bootstrap_tests(METRICS, y, a, a, n_resamples=300, random_state=0, resample="counts",
                                 max_cells=2048)
    for t in same:
        assert t.n_blocks is not None
        assert t.difference == 0 and np.all(t.replicates == 0), t.metric
    rows = stats.bootstrap_tests([precall.roc_auc, precall.average_precision], y, a, b, n_resamples=1500,
                                 random_state=0, resample="rows")
    counts = stats.bootstrap_tests([precall.roc_auc, precall.average_precision], y, a, b, n_resamples=1500,
                                   random_state=1, resample="counts", max_cells=16384)
    assert counts[0].n_blocks is not None
    for r, c in zip(rows, counts):
        assert c.standard_error == pytest.approx(r.standard_error, rel=0.08), c.metric
        assert c.low < c.difference < c.high
    delong = stats.roc_auc_test(y, a, b)
    assert counts[0].standard_error == pytest.approx(delong.standard_error, rel=0.08)


def test_counts_bca_and_unstratified_blocked_run():
    y, a, _ = _data(5000, seed=5)
    r = stats.bootstrap_ci(precall.average_precision, y, a, n_resamples=300, method="bca", random_state=0,
                           resample="counts", max_cells=1024)
    assert r.n_blocks is not None and r.acceleration is not None and r.low < r.estimate < r.high
    u = stats.bootstrap_ci(precall.roc_auc, y, a, n_resamples=300, stratified=False, random_state=0,
                           resample="counts", max_cells=1024)
    assert not u.stratified and u.low < u.estimate < u.high


def test_multiclass_macro_average_shares_the_cells():
    rng = np.random.default_rng(6)
    n, k = 3000, 3
    y = rng.integers(0, k, n)
    scores = rng.normal(size=(n, k)) + np.eye(k)[y]
    ms = [functools.partial(precall.average_precision, average="macro"),
          functools.partial(precall.roc_auc, average="macro")]
    rows = stats.bootstrap_cis(ms, y, scores, n_resamples=1500, random_state=0, resample="rows")
    counts = stats.bootstrap_cis(ms, y, scores, n_resamples=1500, random_state=1, resample="counts",
                                 max_cells=1 << 16)
    for r, c in zip(rows, counts):
        assert c.n_blocks is None  # 3000 rows: every row its own cell at most
        assert c.standard_error == pytest.approx(r.standard_error, rel=0.1)


def test_counts_refuses_what_it_cannot_draw():
    y, a, _ = _data(200, seed=7)
    w = np.ones(200)
    with pytest.raises(ValueError, match="sample_weight.*resample='rows'"):
        stats.bootstrap_ci(precall.average_precision, y, a, sample_weight=w, resample="counts")
    with pytest.raises(ValueError, match="ties='group'"):
        stats.bootstrap_ci(functools.partial(precall.average_precision, ties="stable"), y, a, resample="counts")
    with pytest.raises(ValueError, match="called on each resample"):
        stats.bootstrap_ci(lambda t, s: float(np.mean(s)), y, a, resample="counts")
    with pytest.raises(ValueError, match="resample"):
        stats.bootstrap_ci(precall.average_precision, y, a, resample="cells")
    with pytest.raises(ValueError, match="max_cells"):
        stats.bootstrap_ci(precall.average_precision, y, a, resample="counts", max_cells=10)
    with pytest.raises(TypeError, match="bootstrap_ci"):
        stats.bootstrap_cis(precall.average_precision, y, a, resample="rows")
    with pytest.raises(TypeError, match="bootstrap_cis"):
        stats.bootstrap_ci([precall.average_precision], y, a, resample="rows")
