"""precall.threshold_table / ThresholdTable against the loop oracle."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import oracles
import precall

TIES = ("group", "stable")


def _random_case(rng, n, *, n_distinct=None, weighted=False, zero_weights=False):
    y = rng.integers(0, 2, n)
    if n_distinct is None:
        s = rng.random(n)
    else:
        s = rng.integers(0, n_distinct, n) / n_distinct
    w = None
    if weighted:
        w = rng.random(n) * 3
        if zero_weights:
            w[rng.random(n) < 0.25] = 0.0
    return y, s, w


def _assert_table_equals_oracle(table, pts, weighted):
    np.testing.assert_array_equal(table.thresholds, np.asarray(pts.thresholds))
    if weighted:
        np.testing.assert_allclose(table.tp, pts.tp, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(table.fp, pts.fp, rtol=1e-12, atol=1e-12)
        assert table.n_pos == pytest.approx(pts.n_pos, rel=1e-12, abs=1e-12)
        assert table.n_neg == pytest.approx(pts.n_neg, rel=1e-12, abs=1e-12)
    else:
        np.testing.assert_array_equal(table.tp, pts.tp)
        np.testing.assert_array_equal(table.fp, pts.fp)
        assert table.n_pos == pts.n_pos
        assert table.n_neg == pts.n_neg
    assert len(table) == len(pts)


# ------------------------------------------------------------------- counts
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("n", [1, 2, 3, 7, 40, 200])
@pytest.mark.parametrize("n_distinct", [None, 2, 5])
def test_counts_unweighted(rng, ties, n, n_distinct):
    for _ in range(5):
        y, s, _ = _random_case(rng, n, n_distinct=n_distinct)
        table = precall.threshold_table(y, s, ties=ties)
        pts = oracles.operating_points(y, s, ties=ties)
        _assert_table_equals_oracle(table, pts, weighted=False)
        assert table.ties == ties
        assert table.tp.dtype == np.int64, table.tp.dtype
        assert table.fp.dtype == np.int64, table.fp.dtype


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("zero_weights", [False, True])
@pytest.mark.parametrize("n_distinct", [None, 3])
def test_counts_weighted(rng, ties, zero_weights, n_distinct):
    for n in (1, 2, 5, 30, 150):
        y, s, w = _random_case(rng, n, n_distinct=n_distinct, weighted=True, zero_weights=zero_weights)
        if np.all(w == 0):
            w[0] = 1.0
        table = precall.threshold_table(y, s, sample_weight=w, ties=ties)
        pts = oracles.operating_points(y, s, sample_weight=w, ties=ties)
        _assert_table_equals_oracle(table, pts, weighted=True)
        assert table.tp.dtype == np.float64
        assert table.fp.dtype == np.float64


def test_counts_example_by_hand():
    # scores 0.9 (pos), 0.4 (neg), 0.4 (pos), 0.1 (neg)
    t = precall.threshold_table([1, 0, 1, 0], [0.9, 0.4, 0.4, 0.1])
    np.testing.assert_array_equal(t.thresholds, [0.9, 0.4, 0.1])
    np.testing.assert_array_equal(t.tp, [1, 2, 2])
    np.testing.assert_array_equal(t.fp, [0, 1, 2])
    s = precall.threshold_table([1, 0, 1, 0], [0.9, 0.4, 0.4, 0.1], ties="stable")
    np.testing.assert_array_equal(s.thresholds, [0.9, 0.4, 0.4, 0.1])
    np.testing.assert_array_equal(s.tp, [1, 1, 2, 2])  # the negative 0.4 comes first (input order)
    np.testing.assert_array_equal(s.fp, [0, 1, 1, 2])
    s2 = precall.threshold_table([1, 1, 0, 0], [0.9, 0.4, 0.4, 0.1], ties="stable")
    np.testing.assert_array_equal(s2.tp, [1, 2, 2, 2])
    np.testing.assert_array_equal(s2.fp, [0, 0, 1, 2])


def test_zero_weight_samples_create_no_threshold():
    y = [1, 0, 1, 0, 1]
    s = [0.9, 0.8, 0.7, 0.6, 0.5]
    w = [1.0, 0.0, 2.0, 1.0, 0.0]
    for ties in TIES:
        t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
        np.testing.assert_array_equal(t.thresholds, [0.9, 0.7, 0.6])
        np.testing.assert_allclose(t.tp, [1.0, 3.0, 3.0])
        np.testing.assert_allclose(t.fp, [0.0, 0.0, 1.0])
        assert t.n_pos == 3.0
        assert t.n_neg == 1.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32])
@pytest.mark.parametrize("ties", TIES)
def test_thresholds_keep_score_dtype(rng, dtype, ties):
    y = rng.integers(0, 2, 30)
    s = rng.integers(-5, 6, 30).astype(dtype)
    t = precall.threshold_table(y, s, ties=ties)
    assert t.thresholds.dtype == np.dtype(dtype)
    pts = oracles.operating_points(y, s, ties=ties)
    np.testing.assert_array_equal(t.thresholds, np.asarray(pts.thresholds, dtype=dtype))
    np.testing.assert_array_equal(t.tp, pts.tp)


@pytest.mark.parametrize(
    "labels,pos_label",
    [
        (lambda y: y.astype(bool), None),
        (lambda y: y.astype(bool), True),
        (lambda y: np.where(y == 1, 1, -1), None),
        (lambda y: np.where(y == 1, "spam", "ham"), "spam"),
        (lambda y: np.where(y == 1, 7, 3), 7),
        (lambda y: np.where(y == 1, 2.5, -1.0), 2.5),
        (lambda y: np.where(y == 1, 0, 1), 0),  # positive class encoded as 0
        (lambda y: list(np.where(y == 1, "a", "b")), "a"),  # plain python list
    ],
)
@pytest.mark.parametrize("ties", TIES)
def test_label_types(rng, labels, pos_label, ties):
    y01 = rng.integers(0, 2, 25)
    y01[:2] = [0, 1]
    s = rng.integers(0, 6, 25) / 5
    t = precall.threshold_table(labels(y01), s, pos_label=pos_label, ties=ties)
    pts = oracles.operating_points(y01, s, ties=ties)
    _assert_table_equals_oracle(t, pts, weighted=False)


# ------------------------------------------------------------- derived columns
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("weighted", [False, True])
def test_derived_columns(rng, ties, weighted):
    y, s, w = _random_case(rng, 60, n_distinct=12, weighted=weighted)
    y[:2] = [0, 1]
    t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
    pts = oracles.operating_points(y, s, sample_weight=w, ties=ties)
    tp = np.asarray(pts.tp, dtype=float)
    fp = np.asarray(pts.fp, dtype=float)
    np.testing.assert_allclose(t.fn, pts.n_pos - tp, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(t.tn, pts.n_neg - fp, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(t.precision, pts.precision, rtol=1e-12)
    np.testing.assert_allclose(t.recall, pts.recall, rtol=1e-12)
    np.testing.assert_allclose(t.tpr, pts.recall, rtol=1e-12)
    np.testing.assert_allclose(t.fpr, fp / pts.n_neg, rtol=1e-12)


def test_precision_zero_where_nothing_predicted():
    t = precall.ThresholdTable(
        thresholds=np.array([3.0, 2.0, 1.0]),
        tp=np.array([0, 1, 2]),
        fp=np.array([0, 1, 2]),
        n_pos=2,
        n_neg=2,
        ties="group",
    )
    np.testing.assert_array_equal(t.precision, [0.0, 0.5, 0.5])
    np.testing.assert_array_equal(t.recall, [0.0, 0.5, 1.0])


# ------------------------------------------------------------- constructor
def _detection_table(n_pos=10):
    # 6 detections, 4 true; 10 ground truths in all (6 never detected)
    return precall.ThresholdTable(
        thresholds=np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4]),
        tp=np.array([1, 2, 2, 3, 3, 4]),
        fp=np.array([0, 0, 1, 1, 2, 2]),
        n_pos=n_pos,
        n_neg=2,
        ties="stable",
    )


def test_constructor_n_pos_larger_than_tp():
    t = _detection_table(10)
    assert t.n_pos == 10
    np.testing.assert_allclose(t.recall, np.array([1, 2, 2, 3, 3, 4]) / 10)
    np.testing.assert_allclose(t.fn, 10 - np.array([1, 2, 2, 3, 3, 4]))
    pts = oracles.Points(
        thresholds=[0.9, 0.8, 0.7, 0.6, 0.5, 0.4],
        tp=[1, 2, 2, 3, 3, 4],
        fp=[0, 0, 1, 1, 2, 2],
        n_pos=10,
        n_neg=2,
    )
    for m in oracles.METHODS:
        expected = oracles._AP[m](pts)
        assert t.average_precision(method=m) == pytest.approx(expected, rel=1e-9, abs=1e-9), m
    # reference vs exact grid: recall reaches exactly 0.3 (3 of 10) here
    assert t.average_precision(method="voc2007", recall_grid="exact") == pytest.approx(
        oracles.ap_voc2007(pts, grid="exact"), abs=1e-12
    )
    assert t.average_precision(method="voc2007", recall_grid="reference") == pytest.approx(
        oracles.ap_voc2007(pts, grid="reference"), abs=1e-12
    )


def test_constructor_keeps_values_and_len():
    t = _detection_table()
    np.testing.assert_array_equal(t.thresholds, [0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    np.testing.assert_array_equal(t.tp, [1, 2, 2, 3, 3, 4])
    np.testing.assert_array_equal(t.fp, [0, 0, 1, 1, 2, 2])
    assert len(t) == 6
    assert t.ties == "stable"


def test_frozen():
    t = precall.threshold_table([0, 1, 1], [0.1, 0.5, 0.7])
    for name, value in [
        ("tp", np.array([9, 9, 9])),
        ("fp", np.array([0, 0, 0])),
        ("thresholds", np.array([1.0, 0.5, 0.1])),
        ("n_pos", 5.0),
        ("n_neg", 5.0),
        ("ties", "stable"),
    ]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(t, name, value)
    np.testing.assert_array_equal(t.tp, [1, 2, 2])


def _kw(**over):
    kw = dict(
        thresholds=np.array([0.9, 0.5, 0.1]),
        tp=np.array([1, 2, 2]),
        fp=np.array([0, 0, 1]),
        n_pos=2,
        n_neg=1,
        ties="group",
    )
    kw.update(over)
    return kw


@pytest.mark.parametrize(
    "over,match",
    [
        (dict(thresholds=np.array([0.1, 0.5, 0.9])), "thresholds"),  # increasing
        (dict(thresholds=np.array([0.9, 0.5, 0.5])), "thresholds"),  # equal with ties=group
        (dict(thresholds=np.array([0.9, 0.1, 0.5]), ties="stable"), "thresholds"),
        (dict(tp=np.array([2, 1, 2])), "tp"),  # tp decreasing
        (dict(fp=np.array([1, 0, 1])), "fp"),  # fp decreasing
        (dict(tp=np.array([-1, 2, 2])), "tp"),  # negative
        (dict(tp=np.array([1, 2])), "tp|fp|thresholds|length"),  # lengths differ
        (dict(n_pos=1), "n_pos"),  # fewer positives than tp[-1]
        (dict(n_neg=0), "n_neg"),  # fewer negatives than fp[-1]
        (dict(ties="sorted"), "ties"),
        (dict(thresholds=np.array([0.9, np.nan, 0.1])), "thresholds"),
    ],
)
def test_constructor_rejects_bad_input(over, match):
    with pytest.raises(ValueError, match=match):
        precall.ThresholdTable(**_kw(**over))


def test_constructor_accepts_equal_thresholds_when_stable():
    t = precall.ThresholdTable(**_kw(thresholds=np.array([0.9, 0.5, 0.5]), ties="stable"))
    assert len(t) == 3


# -------------------------------------------------------------- presentation
def test_to_text_and_str_contain_thresholds():
    t = precall.threshold_table([0, 1, 1, 0, 1], [0.25, 0.75, 0.5, 0.125, 0.875])
    text = str(t)
    assert text == t.to_text()
    for th in ("0.875", "0.75", "0.5", "0.25", "0.125"):
        assert th in text, (th, text)
    for col in ("tp", "fp", "precision", "recall"):
        assert col in text


@pytest.mark.parametrize("ties", ["group", "stable"])
def test_to_text_prints_distinct_thresholds_apart(ties):
    """0.99999798 and 0.99999771 both printed 0.999998 (6 significant digits); the table's text uses the one
    rule of a rank table's threshold column (``threshold_texts``, as ``precall explain``): more digits where
    a neighbouring distinct threshold would print the same, shown rows or not; equal ones print alike."""
    y = np.array([1, 0, 1, 0, 1])
    s = np.array([0.99999798, 0.99999798, 0.99999771, 0.5, 0.1])
    t = precall.threshold_table(y, s, ties=ties)
    column = 1 if ties == "stable" else 0
    shown = [line.split()[column] for line in t.to_text().splitlines()[2:]]
    want = ["0.999998"] * (2 if ties == "stable" else 1) + ["0.9999977", "0.5", "0.1"]
    assert shown == want
    assert len(set(shown)) == len(set(t.thresholds))
    assert str(t) == t.to_text()
    first_last = [line.split()[column] for line in t.to_text(max_rows=2).splitlines()[2:]]
    assert first_last == ["0.999998", "...", "0.1"]


def test_to_text_max_rows():
    y = np.arange(60) % 2
    s = np.arange(60) / 4.0
    t = precall.threshold_table(y, s)
    full = t.to_text(max_rows=None)
    short = t.to_text(max_rows=6)
    assert len(full.splitlines()) >= 60
    assert len(short.splitlines()) < 20
    for th in s:
        assert f"{th:g}" in full, th
    # default is 20 rows
    assert len(str(t).splitlines()) < 30


@pytest.mark.parametrize("ties", TIES)
def test_to_pandas(rng, ties):
    pd = pytest.importorskip("pandas")
    y, s, _ = _random_case(rng, 40, n_distinct=9)
    t = precall.threshold_table(y, s, ties=ties)
    df = t.to_pandas()
    assert isinstance(df, pd.DataFrame)
    assert len(df) == len(t)
    for col in ("threshold", "tp", "fp", "fn", "tn", "precision", "recall", "fpr"):
        assert col in df.columns, (col, list(df.columns))
    pts = oracles.operating_points(y, s, ties=ties)
    np.testing.assert_array_equal(df["threshold"].to_numpy(), pts.thresholds)
    np.testing.assert_array_equal(df["tp"].to_numpy(), pts.tp)
    np.testing.assert_array_equal(df["fp"].to_numpy(), pts.fp)
    np.testing.assert_allclose(df["precision"].to_numpy(), pts.precision, rtol=1e-12)
    np.testing.assert_allclose(df["recall"].to_numpy(), pts.recall, rtol=1e-12)


# ------------------------------------------------------- unusual score dtypes
_FULL_RANGE_DTYPES = [np.uint8, np.uint16, np.uint32, np.uint64, np.int8, np.int16, np.int32, np.int64]


def _assert_dtype_table_equals_oracle(y, s, w, ties, dtype):
    t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
    pts = oracles.operating_points(y, s, sample_weight=w, ties=ties)
    assert t.thresholds.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(t.thresholds, np.asarray(pts.thresholds, dtype=dtype))
    np.testing.assert_array_equal(t.tp, pts.tp)
    np.testing.assert_array_equal(t.fp, pts.fp)


@pytest.mark.parametrize("dtype", _FULL_RANGE_DTYPES)
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("weighted", [False, True])
def test_integer_scores_over_their_full_range(rng, dtype, ties, weighted):
    """Scores anywhere in the dtype's range (uint32 above 2**31, int64 beyond 2**53 ...)
    must be ordered by value."""
    info = np.iinfo(dtype)
    s = rng.integers(info.min, info.max, 120, dtype=dtype, endpoint=True)
    s = np.concatenate([s, s[:40], np.array([info.min, info.max, info.max], dtype=dtype)])
    y = rng.integers(0, 2, s.size)
    w = rng.integers(1, 4, s.size).astype(float) if weighted else None
    _assert_dtype_table_equals_oracle(y, s, w, ties, dtype)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("weighted", [False, True])
def test_uint32_above_2_31_minimal(ties, weighted):
    s = np.array([1, 2**31, 3], dtype=np.uint32)
    y = [1, 0, 1]
    w = [1.0, 1.0, 1.0] if weighted else None
    t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
    np.testing.assert_array_equal(t.thresholds, np.array([2**31, 3, 1], dtype=np.uint32))
    np.testing.assert_array_equal(t.tp, [0, 1, 2])
    np.testing.assert_array_equal(t.fp, [1, 1, 1])


@pytest.mark.skipif(
    np.finfo(np.longdouble).eps == np.finfo(np.float64).eps,
    reason="long double is float64 on this platform",
)
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("weighted", [False, True])
def test_longdouble_scores_closer_than_float64(ties, weighted):
    one = np.longdouble(1)
    e = np.finfo(np.longdouble).eps
    s = np.array([one, one + e, one + 2 * e, one + e], dtype=np.longdouble)
    y = [1, 0, 1, 1]
    w = [1.0] * 4 if weighted else None
    t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
    pts = oracles.operating_points(y, s, sample_weight=w, ties=ties)
    assert np.all(np.diff(t.thresholds) <= 0), t.thresholds - one
    np.testing.assert_array_equal(t.thresholds, np.asarray(pts.thresholds, dtype=np.longdouble))
    np.testing.assert_array_equal(t.tp, pts.tp)
    np.testing.assert_array_equal(t.fp, pts.fp)


@pytest.mark.parametrize("ties", TIES)
def test_float_scores_differing_in_last_bits(rng, ties):
    """Many float64 scores a few ulps apart (stresses any truncated-key sorting)."""
    for n in (3000, 40000):
        s = 1.0 + rng.integers(0, 2500, n) * np.finfo(float).eps
        s[rng.random(n) < 0.3] *= -1
        y = rng.integers(0, 2, n)
        w = rng.integers(1, 3, n).astype(float)
        order = np.argsort(-s, kind="stable")
        t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
        tu = precall.threshold_table(y, s, ties=ties)
        if ties == "stable":
            np.testing.assert_array_equal(t.thresholds, s[order])
            np.testing.assert_array_equal(t.tp, np.cumsum(w[order] * y[order]))
            np.testing.assert_array_equal(tu.tp, np.cumsum(y[order]))
        else:
            distinct = np.unique(s)[::-1]
            np.testing.assert_array_equal(t.thresholds, distinct)
            np.testing.assert_array_equal(tu.thresholds, distinct)
            np.testing.assert_array_equal(t.tp[-1], np.sum(w * y))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("weighted", [False, True])
def test_float_scores_of_every_sign_and_size(rng, dtype, ties, weighted):
    info = np.finfo(dtype)
    special = np.array(
        [0.0, -0.0, info.max, -info.max, info.tiny, -info.tiny, info.smallest_subnormal,
         -info.smallest_subnormal, 1.0, -1.0, 0.0, -0.0],
        dtype=dtype,
    )
    body = (rng.standard_normal(150) * 10.0 ** rng.integers(-3, 4, 150)).astype(dtype)
    s = np.concatenate([body, special, body[:30]])
    s = s[rng.permutation(s.size)]
    y = rng.integers(0, 2, s.size)
    w = rng.integers(1, 4, s.size).astype(float) if weighted else None
    _assert_dtype_table_equals_oracle(y, s, w, ties, dtype)


def test_to_pandas_without_pandas_names_the_extra(monkeypatch):
    import sys

    t = precall.threshold_table([0, 1], [0.2, 0.8])
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` fail
    with pytest.raises(ImportError, match=r"\[pandas\]"):
        t.to_pandas()


# ---------------------------------------------------------------------------
# AP terms (what `precall explain` prints) and the precision envelope
@pytest.mark.parametrize("method", precall.AP_METHODS)
@pytest.mark.parametrize("ties", ["group", "stable"])
@pytest.mark.parametrize("grid", ["reference", "exact"])
def test_ap_terms_sum_to_the_ap(method, ties, grid):
    rng = np.random.default_rng(11)
    for it in range(40):
        n = int(rng.integers(1, 50))
        y = rng.integers(0, 2, n)
        y[0] = 1
        s = np.round(rng.random(n), 1)
        w = None if it % 2 else rng.uniform(0.1, 3, n)
        table = precall.threshold_table(y, s, ties=ties, sample_weight=w)
        terms = table.ap_terms(method, recall_grid=grid)
        expected = precall.average_precision(y, s, method=method, ties=ties, sample_weight=w, recall_grid=grid)
        assert terms.value == expected
        assert terms.contributions.sum() == pytest.approx(expected, abs=1e-13)
        assert (terms.weight >= 0).all() and (terms.precision >= 0).all() and (terms.precision <= 1).all()
        if method in ("voc2007", "coco"):
            assert len(terms) == (11 if method == "voc2007" else 101)
        else:  # one term per step (voc2010: plus the sentinel when recall stops short of 1)
            assert terms.weight.sum() == pytest.approx(1.0)


def test_ap_terms_of_the_seed_example():
    y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 1]
    s = [0.65, 0.1, 0.15, 0.43, 0.97, 0.24, 0.82, 0.7, 0.32, 0.84]
    table = precall.threshold_table(y, s, ties="stable")
    step = table.ap_terms("step")
    np.testing.assert_allclose(step.precision, [1, 1, 3 / 4, 4 / 7, 5 / 8, 4 / 6])
    np.testing.assert_allclose(step.weight, 1 / 6)
    voc = table.ap_terms("voc2010")
    np.testing.assert_allclose(voc.precision, [1, 1, 3 / 4, 2 / 3, 2 / 3, 2 / 3])
    eleven = table.ap_terms("voc2007")
    np.testing.assert_allclose(eleven.precision, [1, 1, 1, 1, 3 / 4, 3 / 4, 2 / 3, 2 / 3, 2 / 3, 2 / 3, 2 / 3])
    np.testing.assert_allclose(table.precision_envelope,
                               [1, 1, 3 / 4, 3 / 4, 2 / 3, 2 / 3, 2 / 3, 2 / 3, 2 / 3, 0.6])


def test_voc2010_terms_keep_the_sentinel_when_recall_stops_short():
    table = precall.ThresholdTable(thresholds=[0.9, 0.5], tp=[1, 1], fp=[0, 1], n_pos=4, n_neg=1)
    terms = table.ap_terms("voc2010")
    np.testing.assert_allclose(terms.recall, [0.25, 1.0])
    np.testing.assert_allclose(terms.contributions, [0.25, 0.0])
    with pytest.raises(ValueError, match="no terms"):
        precall.ThresholdTable(thresholds=[0.9], tp=[0], fp=[1], n_pos=0, n_neg=1).ap_terms()


# ---------------------------------------------------------------------------
# operating points, against a brute force over every threshold
def _brute_points(y, s, w):
    """(threshold, tp, fp, precision, recall) of predicting score >= t, each distinct t."""
    out = []
    for t in sorted(set(s), reverse=True):
        pred = s >= t
        tp, fp = w[pred & (y == 1)].sum(), w[pred & (y == 0)].sum()
        out.append((t, tp, fp, tp / (tp + fp) if tp + fp else 0.0, tp / w[y == 1].sum()))
    return out


def test_operating_points_equal_brute_force():
    rng = np.random.default_rng(5)
    for it in range(60):
        n = int(rng.integers(2, 40))
        y = rng.integers(0, 2, n)
        y[:2] = [0, 1]
        s = np.round(rng.random(n), 1)
        w = np.ones(n) if it % 2 else rng.uniform(0.5, 2, n)
        table = precall.threshold_table(y, s, sample_weight=None if it % 2 else w)
        points = _brute_points(y, s, w)
        for r in (0.0, 0.3, 0.5, 1.0):
            expected = next(p for p in points if p[4] >= r - 1e-12)
            got = table.operating_point(recall=r)
            assert (got.threshold, got.recall) == pytest.approx((expected[0], expected[4]))
        for p in (0.2, 0.5, 0.9):
            ok = [q for q in points if q[3] >= p - 1e-12]
            if not ok:
                with pytest.raises(ValueError, match="never reached"):
                    table.operating_point(precision=p)
                continue
            best = max(q[4] for q in ok)
            expected = next(q for q in ok if q[4] == pytest.approx(best))
            got = table.operating_point(precision=p)
            assert (got.threshold, got.precision, got.recall) == pytest.approx(expected[0:1] + expected[3:])
        for t in (-1.0, 0.25, 0.5, 2.0):
            pred = s >= t
            got = table.operating_point(threshold=t)
            assert got.tp == pytest.approx(w[pred & (y == 1)].sum())
            assert got.fp == pytest.approx(w[pred & (y == 0)].sum())
            assert got.tn + got.fp == pytest.approx(w[y == 0].sum())
            if got.precision + got.recall > 0:
                assert got.f1 == pytest.approx(2 * got.precision * got.recall / (got.precision + got.recall))


def test_operating_point_arguments():
    table = precall.threshold_table([0, 1, 1], [0.2, 0.5, 0.9])
    with pytest.raises(ValueError, match="exactly one"):
        table.operating_point()
    with pytest.raises(ValueError, match="exactly one"):
        table.operating_point(recall=0.5, precision=0.5)
    with pytest.raises(ValueError, match="`recall`"):
        table.operating_point(recall=1.5)
    with pytest.raises(ValueError, match="`threshold`"):
        table.operating_point(threshold=float("nan"))


# ------------------------------------------------- the table's methods are the functions, bit for bit
from hypothesis import assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from precall.space import prg_curve_from_table  # noqa: E402

_WEIGHTS = (0.0, 1e-3, 0.1, 0.5, 1.0, 2.5, 3.0)


@st.composite
def _tied_data(draw):
    """(y, scores with many ties, weights or None): both classes with positive weight."""
    n = draw(st.integers(2, 24))
    y = np.asarray(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    s = np.asarray(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))) / 4.0
    w = None
    if draw(st.booleans()):
        w = np.asarray(draw(st.lists(st.sampled_from(_WEIGHTS), min_size=n, max_size=n)))
    wt = np.ones(n) if w is None else w
    assume(wt[y == 1].sum() > 0 and wt[y == 0].sum() > 0)
    return y, s, w


def _bits(x):
    """A value or a tuple of arrays as comparable bytes (bit for bit, NaN included)."""
    if isinstance(x, tuple):
        return tuple(_bits(a) for a in x)
    return np.asarray(x, dtype=np.float64).tobytes()


def _table_numbers(t):
    """Everything a table gives that groups ties (ROC, DET, PRG), whatever its `ties`."""
    out = {"roc_auc": t.roc_auc(), "evaluate roc_auc": t.evaluate().roc_auc, "auprg": t.evaluate().auprg,
           "prg": tuple(prg_curve_from_table(t))}
    for max_fpr in (0.25, 0.5, 0.8, 1.0):
        out[f"roc_auc max_fpr={max_fpr}"] = t.roc_auc(max_fpr=max_fpr)
    for drop in (True, False):
        out[f"roc_curve drop={drop}"] = tuple(t.roc_curve(drop_intermediate=drop))
        out[f"det_curve drop={drop}"] = tuple(t.det_curve(drop_intermediate=drop))
    for best in ("youden", "closest"):
        out[f"best {best}"] = dataclasses.astuple(t.operating_point(best=best))
    return {k: _bits(v) for k, v in out.items()}


@settings(deadline=None)
@given(data=_tied_data(), ties=st.sampled_from(TIES), perm_seed=st.integers(0, 2**32 - 1))
def test_table_methods_equal_the_functions_bit_for_bit(data, ties, perm_seed):
    # ROC-AUC (full and partial), the ROC and DET curves and AUPRG group ties whatever `ties`: a
    # stable table's methods give the functions' bits, and do not depend on the order of the rows
    y, s, w = data
    t = precall.threshold_table(y, s, sample_weight=w, ties=ties)
    got = _table_numbers(t)
    functions = {"roc_auc": precall.roc_auc(y, s, sample_weight=w),
                 "evaluate roc_auc": precall.evaluate(y, s, sample_weight=w, ties=ties).roc_auc,
                 "auprg": precall.auprg(y, s, sample_weight=w),
                 "prg": tuple(precall.precision_recall_gain_curve(y, s, sample_weight=w))}
    for max_fpr in (0.25, 0.5, 0.8, 1.0):
        functions[f"roc_auc max_fpr={max_fpr}"] = precall.roc_auc(y, s, sample_weight=w, max_fpr=max_fpr)
    for drop in (True, False):
        functions[f"roc_curve drop={drop}"] = tuple(precall.roc_curve(y, s, sample_weight=w, drop_intermediate=drop))
        functions[f"det_curve drop={drop}"] = tuple(precall.det_curve(y, s, sample_weight=w, drop_intermediate=drop))
    grouped = _table_numbers(precall.threshold_table(y, s, sample_weight=w))
    for name, value in functions.items():
        assert got[name] == _bits(value), name
    assert got == grouped
    order = np.random.default_rng(perm_seed).permutation(len(y))
    permuted = precall.threshold_table(y[order], s[order], sample_weight=None if w is None else w[order], ties=ties)
    assert _table_numbers(permuted) == got
    # the AP conventions follow `ties` (stable: the input order decides), table and functions alike
    evaluation = precall.evaluate(y, s, sample_weight=w, ties=ties)
    for method in precall.CONVENTIONS:
        expected = precall.average_precision(y, s, sample_weight=w, method=method, ties=ties)
        assert _bits(t.average_precision(method=method)) == _bits(expected), method
        assert _bits(t.evaluate().average_precision[method]) == _bits(evaluation.average_precision[method]), method
