"""precall.Accumulator: any split into batches, merged in any order, gives the table
the in-memory path builds from all rows; the payload round-trips and foreign or
corrupt payloads are rejected."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import oracles
import precall


_tables_equal = oracles.assert_tables_equal


rows = st.lists(st.tuples(st.booleans(), st.integers(-3, 6), st.integers(0, 3)), min_size=1, max_size=60)


@given(rows, st.lists(st.integers(0, 60), max_size=5), st.booleans(), st.randoms(use_true_random=False))
def test_batches_and_merges_equal_one_shot(data, cuts, weighted, rnd):
    y = np.array([r[0] for r in data], dtype=int)
    s = np.array([r[1] / 2 for r in data])  # ties, negatives, -0.0
    w = np.array([float(r[2]) for r in data]) if weighted else None
    if w is not None and not (w > 0).any():
        w[0] = 1.0
    bounds = sorted({0, len(y), *[c % (len(y) + 1) for c in cuts]})
    parts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        acc = precall.Accumulator()
        acc.update(y[lo:hi], s[lo:hi], sample_weight=None if w is None else w[lo:hi])
        parts.append(acc)
    rnd.shuffle(parts)  # commutative
    merged = parts[0]
    for p in parts[1:]:
        merged = merged.merge(p)
    one = precall.Accumulator().update(y, s, sample_weight=w)
    expected = precall.threshold_table(y, s, sample_weight=w)
    _tables_equal(one.table(), expected, exact=w is None)
    _tables_equal(merged.table(), expected, exact=w is None)
    # one accumulator fed every batch in turn
    fed = precall.Accumulator()
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        fed.update(y[lo:hi], s[lo:hi], sample_weight=None if w is None else w[lo:hi])
    _tables_equal(fed.table(), expected, exact=w is None)


def test_merge_is_associative(rng):
    y = rng.integers(0, 2, 300)
    s = np.round(rng.random(300), 2)
    a, b, c = (precall.Accumulator().update(y[i::3], s[i::3]) for i in range(3))
    left = a.merge(b).merge(c).table()
    right = a.merge(b.merge(c)).table()
    _tables_equal(left, right)
    _tables_equal(left, precall.threshold_table(y, s))


def test_metrics_from_the_table_equal_in_memory(rng):
    y = rng.integers(0, 2, 2000)
    s = np.round(rng.random(2000) + 0.3 * y, 3)
    acc = precall.Accumulator()
    for lo in range(0, 2000, 128):
        acc.update(y[lo:lo + 128], s[lo:lo + 128])
    table = acc.table()
    for m in precall.AP_METHODS:
        assert table.average_precision(method=m) == precall.average_precision(y, s, method=m)
    assert table.roc_auc() == precall.roc_auc(y, s)


def test_pos_label_and_string_labels(rng):
    y = np.where(rng.random(100) < 0.4, "spam", "ham")
    s = rng.random(100)
    acc = precall.Accumulator(pos_label="spam").update(y[:50], s[:50]).update(y[50:], s[50:])
    _tables_equal(acc.table(), precall.threshold_table(y, s, pos_label="spam"))
    with pytest.raises(ValueError, match="pos_label"):
        precall.Accumulator().update(y, s)


def test_multiclass_one_table_per_class(rng):
    y = rng.integers(0, 3, 240)
    z = np.round(rng.random((240, 3)), 2)
    acc = precall.Accumulator(labels=[0, 1, 2])
    for lo in range(0, 240, 50):
        acc.update(y[lo:lo + 50], z[lo:lo + 50])
    expected = precall.per_class_tables(y, z)
    for c, table in acc.tables().items():
        _tables_equal(table, expected[c])
    with pytest.raises(ValueError, match="name the class"):
        acc.table()
    with pytest.raises(ValueError, match="binary"):
        precall.Accumulator().update(y, z)


def test_round_trip_and_rejections(rng):
    y = rng.integers(0, 2, 50)
    s = rng.random(50)
    w = rng.uniform(0.5, 2, 50)
    for acc in (precall.Accumulator().update(y, s), precall.Accumulator().update(y, s, sample_weight=w),
                precall.Accumulator(labels=["a", "b"]).update(np.c_[y, 1 - y], np.c_[s, 1 - s])):
        again = precall.Accumulator.from_bytes(acc.to_bytes())
        for (_, t1), (_, t2) in zip(acc.tables().items(), again.tables().items()):
            _tables_equal(t1, t2)
        assert again.merge(acc).n_distinct == acc.n_distinct
    payload = precall.Accumulator().update(y, s).to_bytes()
    with pytest.raises(ValueError, match="not a precall Accumulator payload"):
        precall.Accumulator.from_bytes(b"garbage")
    with pytest.raises(ValueError, match="not a precall Accumulator payload"):
        precall.Accumulator.from_bytes(payload[: len(payload) // 2])
    buffer = io.BytesIO()
    np.savez(buffer, x=np.arange(3))
    with pytest.raises(ValueError, match="not a precall Accumulator payload"):
        precall.Accumulator.from_bytes(buffer.getvalue())
    with pytest.raises(TypeError, match="bytes"):
        precall.Accumulator.from_bytes("text")


def test_corrupt_state_and_other_errors(rng):
    import json

    acc = precall.Accumulator().update([0, 1, 1], [0.3, 0.2, 0.9])
    with np.load(io.BytesIO(acc.to_bytes())) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["scores_0"] = arrays["scores_0"][::-1].copy()  # unsorted
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with pytest.raises(ValueError, match="corrupt"):
        precall.Accumulator.from_bytes(buffer.getvalue())
    meta = json.loads(bytes(arrays["meta"]).decode())
    meta["version"] = 99
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with pytest.raises(ValueError, match="version 99"):
        precall.Accumulator.from_bytes(buffer.getvalue())
    with pytest.raises(ValueError, match="no row"):
        precall.Accumulator().table()
    with pytest.raises(ValueError, match="same `pos_label`"):
        precall.Accumulator(pos_label=1).merge(precall.Accumulator(pos_label=0))
    with pytest.raises(TypeError, match="Accumulator"):
        precall.Accumulator().merge(3)
    with pytest.raises(ValueError, match="NaN"):
        precall.Accumulator().update([0, 1], [0.1, float("nan")])


# ------------------------------------------------------------------ binned mode
@given(rows, st.integers(1, 12), st.booleans(), st.sampled_from(["group", "stable"]))
def test_binned_bounds_always_contain_the_exact_value(data, n_bins, weighted, ties):
    y = np.array([r[0] for r in data], dtype=int)
    s = np.array([r[1] for r in data], dtype=float)
    w = np.array([float(r[2]) for r in data]) if weighted else None
    if w is not None and not (w > 0).any():
        w[0] = 1.0
    acc = precall.Accumulator(bins=n_bins, score_range=(-3, 6)).update(y, s, sample_weight=w)
    has_pos = bool((y[w > 0] if w is not None else y).any())
    for m in precall.AP_METHODS:
        b = acc.average_precision(method=m, on_undefined="nan")
        exact = precall.average_precision(y, s, method=m, sample_weight=w, ties=ties, on_undefined="nan")
        if not has_pos:
            assert np.isnan(b.value) and np.isnan(exact)
            continue
        assert b.low - 1e-12 <= exact <= b.high + 1e-12, (m, b, exact)
        assert b.low - 1e-12 <= b.value <= b.high + 1e-12
    b = acc.roc_auc(on_undefined="nan")
    exact = precall.roc_auc(y, s, sample_weight=w, on_undefined="nan")
    if np.isnan(exact):
        assert np.isnan(b.value)
    else:
        assert b.low - 1e-12 <= exact <= b.high + 1e-12


def test_binned_with_one_score_per_bin_is_exact(rng):
    y = rng.integers(0, 2, 200)
    s = rng.integers(0, 20, 200).astype(float)
    acc = precall.Accumulator(bins=np.arange(-0.5, 20.5, 1.0)).update(y, s)  # a bin per distinct score
    for m in precall.AP_METHODS:
        assert acc.average_precision(method=m).value == pytest.approx(precall.average_precision(y, s, method=m))
    b = acc.roc_auc()
    assert b.value == pytest.approx(precall.roc_auc(y, s))


def test_binned_merge_and_round_trip(rng):
    y = rng.integers(0, 2, 500)
    s = rng.random(500)
    parts = [precall.Accumulator(bins=50, score_range=(0, 1)).update(y[i::2], s[i::2]) for i in range(2)]
    merged = parts[0].merge(parts[1])
    whole = precall.Accumulator(bins=50, score_range=(0, 1)).update(y, s)
    assert merged.average_precision() == whole.average_precision()
    again = precall.Accumulator.from_bytes(merged.to_bytes())
    assert again.roc_auc() == whole.roc_auc()
    with pytest.raises(ValueError, match="same bins"):
        merged.merge(precall.Accumulator())
    with pytest.raises(ValueError, match="no exact table"):
        merged.table()
    with pytest.raises(ValueError, match="score_range"):
        precall.Accumulator(bins=10)
    with pytest.raises(ValueError, match="strictly increasing"):
        precall.Accumulator(bins=[0.0, 0.5, 0.5])
    exact = precall.Accumulator().update(y, s)
    b = exact.average_precision(method="coco")
    assert b.low == b.value == b.high == precall.average_precision(y, s, method="coco")


def test_runs_are_merged_like_a_binary_counter(rng, monkeypatch):
    from precall.scale import accumulator as accumulate

    monkeypatch.setattr(accumulate, "_ROWS", 100)  # unweighted rows sorted 100 at a time
    monkeypatch.setattr(accumulate, "_MIN_ROWS", 100)
    y = rng.integers(0, 2, 3000)
    s = np.round(rng.random(3000), 3)
    w = rng.uniform(0.5, 2, 3000)
    for weights in (None, w):
        acc = precall.Accumulator()
        for lo in range(0, 3000, 37):
            acc.update(y[lo:lo + 37], s[lo:lo + 37], sample_weight=None if weights is None else weights[lo:lo + 37])
            sizes = [r[0].size for r in acc._pending[0].stack]
            assert all(a > b for a, b in zip(sizes, sizes[1:]))  # decreasing: at most log2(batches) runs
            assert acc._pending[0].n_rows < 100
        assert len(acc._pending[0].stack) > 1  # several runs were waiting
        _tables_equal(acc.table(), precall.threshold_table(y, s, sample_weight=weights), exact=weights is None)


@pytest.mark.parametrize("distinct", [20, None])  # 20 scores, or continuous
def test_waiting_rows_are_bounded_by_the_state(rng, monkeypatch, distinct):
    """Few distinct scores: no more than max(_MIN_ROWS, distinct scores held) rows wait
    unsorted; continuous scores (the state grows with the rows): up to _ROWS."""
    from precall.scale import accumulator as accumulate

    monkeypatch.setattr(accumulate, "_ROWS", 5000)
    monkeypatch.setattr(accumulate, "_MIN_ROWS", 200)
    monkeypatch.setattr(accumulate, "_PROBE", 100)
    n = 20000
    y = rng.integers(0, 2, n)
    s = rng.random(n) if distinct is None else rng.integers(0, distinct, n) / distinct
    acc = precall.Accumulator()
    waited = 0
    for lo in range(0, n, 50):
        acc.update(y[lo:lo + 50], s[lo:lo + 50])
        waited = max(waited, acc._pending[0].n_rows)
    bound = 200 + 50 if distinct is not None else 5000 + 50
    assert waited <= bound
    if distinct is None:
        assert waited > 200 + 50  # continuous scores wait for more rows (fewer merges)
    _tables_equal(acc.table(), precall.threshold_table(y, s), exact=True)


def test_counts_widen_before_they_overflow():
    from precall.scale import accumulator as accumulate

    big = np.array([2**31 + 5], dtype=np.uint32)
    a = (np.array([0.5], dtype=np.float32), big, np.zeros(1, dtype=np.uint32))
    merged = accumulate._merge_two(a, a)
    assert merged[1].dtype == np.int64 and merged[1][0] == 2**32 + 10
    small = accumulate._merge_two((a[0], np.array([3], np.uint32), a[2]), (np.array([0.25, 0.5], np.float32),
                                  np.array([1, 4], np.uint32), np.array([2, 0], np.uint32)))
    assert small[1].dtype == np.uint32
    np.testing.assert_array_equal(small[0], [0.25, 0.5])
    np.testing.assert_array_equal(small[1], [1, 7])
    np.testing.assert_array_equal(small[2], [2, 0])


def test_integer_scores_beyond_2_53_are_refused_not_tied():
    """float64 state scores cannot hold 2**62 + 1 and 2**62 apart: refused (as the readers refuse them), the
    state unchanged, where a silent tie gave ROC-AUC 0.5 against the in-memory 1.0."""
    y, s = np.array([1, 0]), np.array([2**62 + 1, 2**62], dtype=np.int64)
    acc = precall.Accumulator().update([0, 1], [0.2, 0.7])
    for feed in (lambda: acc.update(y, s), lambda: acc.update(y, -s), lambda: acc.update(y, s.astype(np.uint64)),
                 lambda: acc.update(y, s, sample_weight=[1.0, 2.0])):
        with pytest.raises(ValueError, match=r"`y_score` -?4611686018427387905 \(index 0\) is an integer beyond "
                                             r"2\*\*53.*evaluate the arrays in memory"):
            feed()
    assert repr(acc) == "Accumulator(binary, 2 distinct scores, n_pos=1, n_neg=1)"
    with pytest.raises(ValueError, match=r"row 1, column 1\) is an integer beyond 2\*\*53"):
        precall.Accumulator(labels=[0, 1]).update([0, 1], np.array([[1, 2], [3, 2**60]]))
    with pytest.raises(ValueError, match="beyond 2"):
        precall.Accumulator(bins=4, score_range=(0, 2**63)).update(y, s)
    sliced = precall.SlicedAccumulator().update([0, 1], [0.2, 0.7], by=["a", "b"])
    with pytest.raises(ValueError, match="beyond 2"):
        sliced.update(y, s, by=["c", "c"])
    assert sliced.keys == [("a",), ("b",)] and repr(sliced) == "SlicedAccumulator(2 slices by slice, 2 rows)"
    edge = np.array([2**53, 2**53 - 1, -(2**53)], dtype=np.int64)  # still exact as float64: kept
    got = precall.Accumulator().update([1, 0, 1], edge).evaluate().roc_auc
    assert got == precall.roc_auc([1, 0, 1], edge) == 0.5


@pytest.mark.parametrize("labels, match", [
    ([0, 1, np.nan], r"`labels` must name classes of `y_true`; got nan at index 2, which equals no label"),
    (np.array([0, 1, float("nan")], dtype=object), r"got nan at index 2, which equals no label"),
    ([0, 1, 1], r"`labels` must be unique"),
    ([[0, 1, 2]], r"`labels` must be 1-D"),
])
def test_labels_pass_the_in_memory_front_door(labels, match):
    """labels= with a NaN was taken by the Accumulator, then "label nan is not one of [0.0, 1.0, nan]": one
    validator refuses it up front, in memory and streaming alike (NaN equals no label, as for pos_label)."""
    s = np.random.default_rng(0).random((6, 3))
    y = [0, 1, 0, 1, 0, 1]
    with pytest.raises(ValueError, match=match):
        precall.average_precision(y, s, labels=labels, average=None)
    with pytest.raises(ValueError, match=match):
        precall.Accumulator(labels=labels)


def _count_payload(pos: list[int], neg: list[int]) -> bytes:
    with np.load(io.BytesIO(precall.Accumulator().update([0, 1], [0.1, 0.9]).to_bytes())) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays.update(scores_0=np.array([0.1, 0.9]), pos_0=np.array(pos, np.int64), neg_0=np.array(neg, np.int64))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def test_counts_past_int64_are_refused_not_wrapped():
    """Totals past 2**63 - 1 wrapped round to negative counts (ROC-AUC NaN, no warning): a payload, a merge
    or an update that would count more rows in one table is refused, naming the limit."""
    with pytest.raises(ValueError, match=r"corrupt Accumulator payload: table 0: counts adding up to "
                                         r"9223372036854775808 rows, beyond the 2\*\*63 - 1"):
        precall.Accumulator.from_bytes(_count_payload([0, 2**62], [2**62, 0]))
    a = precall.Accumulator.from_bytes(_count_payload([0, 2**61], [2**61, 0]))  # 2**62 rows: exact
    e = a.evaluate()
    assert (e.roc_auc, e.average_precision["step"], e.n_pos, e.n_neg) == (1.0, 1.0, 2**61, 2**61)
    with pytest.raises(ValueError, match=r"the merge would count 9223372036854775808 rows in one table, beyond "
                                         r"the 2\*\*63 - 1 an int64 count holds"):
        a.merge(a)
    full = precall.Accumulator.from_bytes(_count_payload([0, 2**62 - 1], [2**62, 0]))  # 2**63 - 1 rows
    with pytest.raises(ValueError, match="this batch would count 9223372036854775809 rows"):
        full.update([0, 1], [0.1, 0.9])
    assert full.table().tp[-1] == 2**62 - 1  # unchanged
    full.update([0, 1], [0.1, 0.9], sample_weight=[1.0, 1.0])  # weights: float sums, no int64 count
    binned = precall.Accumulator(bins=2, score_range=(0, 1))
    with np.load(io.BytesIO(binned.update([0, 1], [0.1, 0.9]).to_bytes())) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays.update(pos_0=np.array([0, 2**62], np.int64), neg_0=np.array([2**62 - 1, 0], np.int64))
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    big = precall.Accumulator.from_bytes(buffer.getvalue())
    with pytest.raises(ValueError, match="beyond the 2"):
        big.merge(big)
    with pytest.raises(ValueError, match="beyond the 2"):
        big.update([1], [0.5])


@given(rows, st.booleans(), st.sampled_from(["reference", "exact"]))
def test_evaluate_from_the_state_equals_in_memory(data, weighted, grid):
    y = np.array([r[0] for r in data], dtype=int)
    s = np.array([r[1] / 2 for r in data])
    w = np.array([float(r[2]) for r in data]) if weighted else None
    if w is not None and not (w > 0).any():
        w[0] = 1.0
    acc = precall.Accumulator()
    half = max(1, len(y) // 2)
    acc.update(y[:half], s[:half], sample_weight=None if w is None else w[:half])
    if half < len(y):
        acc.update(y[half:], s[half:], sample_weight=None if w is None else w[half:])
    got = acc.evaluate(recall_grid=grid, on_undefined="nan")
    expected = precall.evaluate(y, s, sample_weight=w, recall_grid=grid, on_undefined="nan")
    for m in precall.AP_METHODS:
        if np.isnan(expected.average_precision[m]):  # no positives
            assert np.isnan(got.average_precision[m]) and np.isnan(acc.average_precision(method=m, on_undefined="nan").value)
            continue
        if w is None:  # integer counts: the same steps, the same sums
            assert got.average_precision[m] == expected.average_precision[m]
        assert got.average_precision[m] == pytest.approx(expected.average_precision[m], rel=1e-12, abs=1e-15)
        b = acc.average_precision(method=m, recall_grid=grid)
        assert b.low == b.value == b.high == pytest.approx(expected.average_precision[m], rel=1e-12, abs=1e-15)
    assert got.roc_auc == pytest.approx(expected.roc_auc, rel=1e-12, nan_ok=True)
    assert acc.roc_auc(on_undefined="nan").value == pytest.approx(expected.roc_auc, rel=1e-12, nan_ok=True)
    assert (got.n_pos, got.n_neg) == pytest.approx((expected.n_pos, expected.n_neg), rel=1e-12)
    assert (got.best_f1 is None) == (expected.best_f1 is None)
    if got.best_f1 is not None:
        assert got.best_f1.threshold == expected.best_f1.threshold


@pytest.mark.parametrize("bins", [None, 8])
def test_accumulator_ap_and_roc_auc_follow_the_undefined_policy(bins):
    """``Accumulator.average_precision`` / ``roc_auc`` returned NaN without a word where every other route
    warns (AP 0.0, ROC-AUC NaN by default); they take ``on_undefined`` as the functions do."""
    kw = {} if bins is None else {"bins": bins, "score_range": (0, 1)}
    acc = precall.Accumulator(**kw).update([0, 0, 0], [0.2, 0.5, 0.7])
    with pytest.warns(precall.UndefinedMetricWarning, match="No positive class"):
        ap = acc.average_precision()
    assert (ap.value, ap.low, ap.high) == (0.0, 0.0, 0.0)
    with pytest.warns(precall.UndefinedMetricWarning, match="Only one class"):
        assert np.isnan(acc.roc_auc().value)
    assert acc.average_precision(on_undefined=0.25).high == 0.25 and np.isnan(acc.average_precision(
        on_undefined="nan").value)
    with pytest.raises(ValueError, match="average precision is undefined"):
        acc.average_precision(on_undefined="raise")
    with pytest.raises(ValueError, match="no row with positive weight yet"):  # nothing seen: not undefined yet
        precall.Accumulator(**kw).roc_auc()
    with pytest.raises(ValueError, match="no row with positive weight yet"):
        precall.Accumulator(**kw).average_precision()


def test_bad_score_range_and_payload_versions_are_value_errors():
    with pytest.raises(ValueError, match=r"`score_range` must be \(low, high\)"):
        precall.Accumulator(bins=4, score_range=(0, 1, 2))
    with pytest.raises(ValueError, match="`score_range` goes with `bins=N`"):
        precall.Accumulator(bins=[0, 0.5, 1], score_range=(5, 10))
    payload = bytearray(precall.Accumulator().update([0, 1], [0.2, 0.7]).to_bytes())
    central = payload.rfind(b"PK\x01\x02")  # the last central-directory entry: its "version needed" field
    payload[central + 6:central + 8] = (99).to_bytes(2, "little")
    with pytest.raises(ValueError, match="not a precall Accumulator payload"):
        precall.Accumulator.from_bytes(bytes(payload))
