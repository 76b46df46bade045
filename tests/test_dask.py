"""precall.dask: per-partition accumulators tree-reduced on a LocalCluster equal the
in-memory results (heavy ties across partition boundaries, weights, Series input)."""

from __future__ import annotations

import numpy as np
import pytest

import oracles
import precall

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
import precall.dask as pdask  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.mark.parametrize("weighted", [False, True])
def test_equals_in_memory_with_ties_across_partitions(client, weighted):
    rng = np.random.default_rng(3)
    n = 20_000
    y = (rng.random(n) < 0.2).astype(int)
    s = np.round(rng.random(n) + 0.4 * y, 2)  # ~140 distinct scores: every one in many partitions
    w = rng.uniform(0.1, 3.0, n) if weighted else None
    dy, ds = da.from_array(y, chunks=1733), da.from_array(s, chunks=2011)  # unaligned chunks
    dw = None if w is None else da.from_array(w, chunks=997)
    table = pdask.threshold_table(dy, ds, sample_weight=dw)
    expected = precall.threshold_table(y, s, sample_weight=w)
    oracles.assert_tables_equal(table, expected, exact=not weighted)
    for m in precall.AP_METHODS:
        assert pdask.average_precision(dy, ds, method=m, sample_weight=dw) == pytest.approx(
            precall.average_precision(y, s, method=m, sample_weight=w), rel=1e-12, abs=1e-15)
    assert pdask.roc_auc(dy, ds, sample_weight=dw) == pytest.approx(precall.roc_auc(y, s, sample_weight=w),
                                                                    rel=1e-12)
    ev = pdask.evaluate(dy, ds, sample_weight=dw)
    assert ev.average_precision["voc2010"] == pytest.approx(
        precall.average_precision(y, s, method="voc2010", sample_weight=w), rel=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_partition_of_zero_weights_adds_nothing(client, dtype):
    """A partition whose weights are all zero was refused as if it were the whole input ("at least one
    positive weight"); it adds nothing, as a batch of an ``Accumulator`` and as those rows in memory."""
    rng = np.random.default_rng(5)
    y = (rng.random(600) < 0.3).astype(int)
    s = np.round(rng.random(600), 2).astype(dtype)
    w = rng.uniform(0.5, 2.0, 600)
    w[200:400] = 0.0  # the second partition
    dy, ds, dw = (da.from_array(a, chunks=200) for a in (y, s, w))
    oracles.assert_tables_equal(pdask.threshold_table(dy, ds, sample_weight=dw),
                                precall.threshold_table(y, s, sample_weight=w), exact=False)
    ev, want = pdask.evaluate(dy, ds, sample_weight=dw), precall.evaluate(y, s, sample_weight=w)
    for m in precall.AP_METHODS:
        assert ev.average_precision[m] == pytest.approx(want.average_precision[m], rel=1e-12)
    assert pdask.accumulate(dy, ds, sample_weight=dw).evaluate().roc_auc == pytest.approx(want.roc_auc, rel=1e-12)
    with pytest.raises(ValueError, match="partition 1 .*"):
        pdask.evaluate(dy, da.from_array(np.where(np.arange(600) == 250, np.nan, s), chunks=200), sample_weight=dw)


def test_dataframe_columns_and_errors(client):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"label": np.where(rng.random(3000) < 0.3, "spam", "ham"),
                          "score": np.round(rng.random(3000), 3)})
    ddf = dd.from_pandas(frame, npartitions=7)
    got = pdask.average_precision(ddf["label"], ddf["score"], pos_label="spam")
    assert got == pytest.approx(precall.average_precision(frame["label"], frame["score"], pos_label="spam"),
                                rel=1e-12)
    table = pdask.threshold_table(ddf["label"], ddf["score"], pos_label="spam")
    expected = precall.threshold_table(frame["label"], frame["score"], pos_label="spam")
    np.testing.assert_array_equal(table.tp, expected.tp)
    with pytest.raises(TypeError, match="dask array"):
        pdask.roc_auc(frame["label"].to_numpy(), frame["score"].to_numpy())
    with pytest.raises(ValueError, match="same length"):
        pdask.roc_auc(da.zeros(5, chunks=2), da.zeros(4, chunks=2))


def _assert_evaluations_equal(got, expected):
    for m in precall.AP_METHODS:
        assert got.average_precision[m] == pytest.approx(expected.average_precision[m], rel=1e-12, abs=1e-15), m
    assert got.roc_auc == pytest.approx(expected.roc_auc, rel=1e-12)
    assert got.auprg == pytest.approx(expected.auprg, rel=1e-12)
    assert got.normalized_average_precision == pytest.approx(expected.normalized_average_precision, rel=1e-12)
    assert (got.n_pos, got.n_neg, got.n_samples) == pytest.approx((expected.n_pos, expected.n_neg,
                                                                  expected.n_samples), rel=1e-12)
    assert got.best_f1.threshold == expected.best_f1.threshold
    assert got.best_f1.f1 == pytest.approx(expected.best_f1.f1, rel=1e-12)


@pytest.mark.parametrize("grid", ["reference", "exact"])
def test_score_ranges_on_a_cluster_equal_in_memory(client, grid):
    rng = np.random.default_rng(11)
    n = 30_000
    y = (rng.random(n) < 0.1).astype(int)
    s = np.where(rng.random(n) < 0.5, np.round(rng.random(n), 1), rng.random(n)) + 0.3 * y  # heavy ties
    dy, ds = da.from_array(y, chunks=3001), da.from_array(s, chunks=3001)
    for n_ranges in (1, 3, 10):
        ev = pdask.evaluate(dy, ds, n_ranges=n_ranges, recall_grid=grid)
        expected = precall.evaluate(y, s, recall_grid=grid)
        _assert_evaluations_equal(ev, expected)
        assert ev.roc_auc == expected.roc_auc  # exact integer sums without weights


def test_undefined_results_warn_on_the_client(client):
    y = da.zeros(100, chunks=30, dtype=int)
    s = da.from_array(np.linspace(0, 1, 100), chunks=30)
    with pytest.warns(precall.UndefinedMetricWarning):
        ev = pdask.evaluate(y, s)
    assert ev.average_precision["step"] == 0.0 and np.isnan(ev.roc_auc)
    with pytest.raises(ValueError, match="undefined"):
        pdask.roc_auc(y, s, on_undefined="raise")
    with pytest.raises(ValueError, match="n_ranges"):
        pdask.evaluate(y, s, n_ranges=0)
