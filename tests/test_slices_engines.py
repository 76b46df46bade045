"""Slices on the engines: :class:`precall.SlicedAccumulator` (update, merge, payload) and
``precall.dask.evaluate(..., by=...)`` equal the in-memory ``precall.evaluate(..., by=...)``."""

from __future__ import annotations

import io
import json
import warnings
import zipfile

import numpy as np
import pytest

import precall
from precall import SlicedAccumulator


def _same(a: precall.SlicedEvaluation, b: precall.SlicedEvaluation) -> bool:
    """Every number, name and the ranking, floats by their repr (bit for bit, NaN equal to NaN)."""
    return repr(a.to_dict()) == repr(b.to_dict()) and repr(a.overall) == repr(b.overall)


def _data(seed: int, n: int, m: int, *, missing: float = 0.05, digits: int = 2, weights: bool = False,
          one_class: bool = True):
    rng = np.random.default_rng(seed)
    g = rng.integers(0, m, n).astype(object)
    g[rng.random(n) < missing] = None
    prev = rng.random(m)[rng.integers(0, m, n)] if one_class else np.full(n, 0.4)
    y = (rng.random(n) < prev).astype(int)
    s = np.round(rng.random(n), digits)
    w = np.round(rng.random(n) * 3, 1) if weights else None
    return y, s, g, w


def _stream(y, s, by, w, cuts, *, ship: bool = True, order=None) -> SlicedAccumulator:
    """One accumulator per batch, shipped as payloads and merged in ``order``."""
    bounds = [0, *sorted(cuts), len(y)]
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        acc = SlicedAccumulator()
        if b > a:
            acc.update(y[a:b], s[a:b], by=by[a:b] if not isinstance(by, dict) else {k: v[a:b] for k, v in by.items()},
                       sample_weight=None if w is None else w[a:b])
        parts.append(SlicedAccumulator.from_bytes(acc.to_bytes()) if ship else acc)
    order = order or range(len(parts))
    out = parts[order[0]]
    for i in order[1:]:
        out = out.merge(parts[i])
    return out


# ---------------------------------------------------------------------------
# exact: the accumulator gives the in-memory sliced evaluation
CASES = [  # (seed, rows, slices, digits of the scores (ties), share missing)
    (0, 1, 1, 2, 0.0), (1, 7, 3, 0, 0.0), (2, 50, 4, 1, 0.1), (3, 200, 8, 2, 0.05), (4, 300, 30, 3, 0.0),
    (5, 500, 2, 6, 0.5), (6, 120, 120, 1, 0.0), (7, 1000, 5, 0, 0.2),
]


@pytest.mark.parametrize("seed,n,m,digits,missing", CASES)
@pytest.mark.parametrize("cuts", [(), (1,), (3, 3, 40), (10, 20, 30, 90)])
def test_accumulator_equals_in_memory_bit_for_bit(seed, n, m, digits, missing, cuts):
    y, s, g, _ = _data(seed, n, m, missing=missing, digits=digits)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = precall.evaluate(y, s, by=g, on_undefined="nan")
        got = _stream(y, s, g, None, [c % (n + 1) for c in cuts]).evaluate(on_undefined="nan")
    assert _same(got, want)


@pytest.mark.parametrize("policy", ["warn", "nan", 0.25])
@pytest.mark.parametrize("grid", ["reference", "exact"])
def test_accumulator_undefined_policy_and_grid_as_in_memory(policy, grid):
    y, s, g, _ = _data(11, 400, 9, one_class=True)
    y[g == 3] = 0  # a slice without positives
    y[g == 4] = 1  # a slice without negatives
    with warnings.catch_warnings(record=True) as want_w:
        warnings.simplefilter("always")
        want = precall.evaluate(y, s, by=g, on_undefined=policy, recall_grid=grid, min_support=40)
    with warnings.catch_warnings(record=True) as got_w:
        warnings.simplefilter("always")
        got = _stream(y, s, g, None, (100, 250)).evaluate(on_undefined=policy, recall_grid=grid, min_support=40)
    assert _same(got, want)
    slice_warnings = [str(w.message) for w in want_w if "slice" in str(w.message)]
    assert slice_warnings == [str(w.message) for w in got_w if "slice" in str(w.message)]


def test_accumulator_raise_policy_as_in_memory():
    y, s, g, _ = _data(12, 100, 4)
    y[g == 2] = 0
    with pytest.raises(ValueError, match="undefined in 1 slice"):
        precall.evaluate(y, s, by=g, on_undefined="raise")
    with pytest.raises(ValueError, match="undefined in 1 slice"):
        _stream(y, s, g, None, (50,)).evaluate(on_undefined="raise")


@pytest.mark.parametrize("order", [(0, 1, 2, 3), (3, 2, 1, 0), (2, 0, 3, 1)])
def test_merge_in_any_order(order):
    y, s, g, _ = _data(13, 600, 12)
    want = precall.evaluate(y, s, by=g, on_undefined="nan")
    assert _same(_stream(y, s, g, None, (100, 300, 301), order=list(order)).evaluate(on_undefined="nan"), want)


def test_several_columns_and_names_as_in_memory():
    rng = np.random.default_rng(14)
    n = 800
    by = {"country": rng.choice(["de", "fr", "", "us"], n), "device": rng.integers(0, 3, n).astype(float)}
    by["device"][rng.random(n) < 0.1] = np.nan
    y, s = rng.integers(0, 2, n), rng.random(n).round(2)
    want = precall.evaluate(y, s, by=by)
    got = _stream(y, s, by, None, (200, 500)).evaluate()
    assert got.names == want.names and got.columns == ("country", "device")
    assert _same(got, want)


#: with weights, sums in another order move a recall across a grid point of voc2007 / coco (as
#: precall.Accumulator does): those two are compared with the same sums in test_dask_weighted_by_...
UNGRIDDED = [m for m in precall.AP_METHODS if m not in ("voc2007", "coco")]


def test_weighted_equal_to_rounding():
    y, s, g, w = _data(15, 700, 6, weights=True)
    w[:50] = 0.0  # a batch of zero weights: its rows count, nothing else
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = precall.evaluate(y, s, by=g, sample_weight=w, on_undefined="nan")
        got = _stream(y, s, g, w, (50, 300)).evaluate(on_undefined="nan")
    assert got.names == want.names
    assert got.n_samples.tolist() == want.n_samples.tolist()
    for m in UNGRIDDED:
        np.testing.assert_allclose(got.average_precision[m], want.average_precision[m], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got.roc_auc, want.roc_auc, rtol=1e-12, equal_nan=True)
    np.testing.assert_allclose(got.n_pos, want.n_pos, rtol=1e-12)


def test_each_slice_equals_evaluate_of_its_rows():
    """The reference is the unsliced function on each slice's rows, not the sliced code."""
    y, s, g, _ = _data(16, 400, 5, missing=0.0, one_class=False)
    got = _stream(y, s, g, None, (123,)).evaluate()
    for i, key in enumerate(got.keys):
        rows = g == key[0]
        want = precall.evaluate(y[rows], s[rows])
        assert repr(got[i].average_precision) == repr(want.average_precision)
        assert repr(got[i].roc_auc) == repr(want.roc_auc)


# ---------------------------------------------------------------------------
# bad input: refused with a message naming what is wrong
def _arrays(acc: SlicedAccumulator) -> dict:
    with zipfile.ZipFile(io.BytesIO(acc.to_bytes())) as z:
        return {name[:-4]: np.load(io.BytesIO(z.read(name))) for name in z.namelist()}


def _payload(acc: SlicedAccumulator, **change) -> bytes:
    arrays = _arrays(acc)
    for k, v in change.items():
        arrays[k] = v
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _meta(acc: SlicedAccumulator, **fields) -> np.ndarray:
    with zipfile.ZipFile(io.BytesIO(acc.to_bytes())) as z:
        meta = json.loads(np.load(io.BytesIO(z.read("meta.npy"))).tobytes())
    meta.update(fields)
    return np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)


_SMALL = SlicedAccumulator().update([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.3], by=["a", "a", "b", "b"])

METRICS = [precall.metric("average_precision", method=m, recall_grid=g) for m in precall.AP_METHODS
           for g in ("reference", "exact")] + [precall.metric("roc_auc"), precall.metric("roc_auc", max_fpr=0.3),
                                              precall.metric("best_f1"), precall.metric("roc_auc", on_undefined=0.5)]


@pytest.mark.parametrize("seed,n,m,digits,missing", CASES)
def test_accumulator_score_and_tables_equal_in_memory(seed, n, m, digits, missing):
    """SlicedAccumulator.score / .tables: precall.score(by=) and threshold_table(by=) of the
    same rows, bit for bit (values, overall, support, ranking, the tables' arrays)."""
    y, s, g, _ = _data(seed, n, m, missing=missing, digits=digits)
    acc = _stream(y, s, g, None, [n // 3, n // 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for metric in METRICS:
            got, want = acc.score(metric, min_support=5), precall.score(metric, y, s, by=g, min_support=5)
            assert got.to_csv() == want.to_csv() and repr(got.overall) == repr(want.overall), metric
            assert got.metric == want.metric and got.ranked.tolist() == want.ranked.tolist()
            np.testing.assert_array_equal(got.values, want.values)
    got, want = acc.tables(min_support=5), precall.threshold_table(y, s, by=g, min_support=5)
    assert got.to_csv() == want.to_csv() and got.names == want.names
    for a, b in [*((got[k], want[k]) for k in want.names), (got.overall, want.overall)]:
        for x, z in ((a.thresholds, b.thresholds), (a.tp, b.tp), (a.fp, b.fp)):
            np.testing.assert_array_equal(x, z)
            assert x.dtype == z.dtype
    with pytest.raises(TypeError, match="`metric` must be a precall.Metric"):
        acc.score("average_precision")


BAD_PAYLOADS = [
    ("not bytes", lambda: "text", TypeError, "payload"),
    ("not a zip", lambda: b"hello", ValueError, "not a precall"),
    ("an Accumulator's payload", lambda: precall.Accumulator().update([0, 1], [0.2, 0.4]).to_bytes(), ValueError,
     "not a precall SlicedAccumulator"),
    ("unsorted scores", lambda: _payload(_SMALL, scores=_arrays(_SMALL)["scores"][::-1].copy()), ValueError,
     "sorted"),
    ("negative counts", lambda: _payload(_SMALL, pos=-_arrays(_SMALL)["pos"].astype(np.int64),
                                         neg=_arrays(_SMALL)["neg"].astype(np.int64)), ValueError, "non-negative"),
    ("sizes off", lambda: _payload(_SMALL, sizes=np.array([4, 2, 3])), ValueError, "sizes"),
    ("version", lambda: _payload(_SMALL, meta=_meta(_SMALL, version=99)), ValueError, "version"),
    ("key twice", lambda: _payload(_SMALL, meta=_meta(_SMALL, keys=[["a"], ["a"]])), ValueError, "twice"),
    ("key width", lambda: _payload(_SMALL, meta=_meta(_SMALL, keys=[["a", 1], ["b", 2]])), ValueError, "keys"),
    ("extra field", lambda: _payload(_SMALL, meta=_meta(_SMALL, extra=1)), ValueError, "fields"),
]


@pytest.mark.parametrize("what,make,error,match", BAD_PAYLOADS, ids=[c[0] for c in BAD_PAYLOADS])
def test_bad_payloads_refused(what, make, error, match):
    with pytest.raises(error, match=match):
        SlicedAccumulator.from_bytes(make())


def test_payload_round_trip_keeps_everything():
    back = SlicedAccumulator.from_bytes(_SMALL.to_bytes())
    assert _same(back.evaluate(), _SMALL.evaluate())
    assert back.to_bytes() == _SMALL.to_bytes()


BAD_USE = [
    ("other columns later", lambda: SlicedAccumulator().update([0, 1], [0.1, 0.2], by={"a": [1, 2]}).update(
        [0, 1], [0.1, 0.2], by={"b": [1, 2]}), ValueError, "same slice columns"),
    ("merge other pos_label", lambda: SlicedAccumulator(pos_label=1).merge(SlicedAccumulator(pos_label=0)),
     ValueError, "pos_label"),
    ("merge a plain accumulator", lambda: SlicedAccumulator().merge(precall.Accumulator()), TypeError, "other"),
    ("multi-class", lambda: SlicedAccumulator().update([0, 1, 2], np.eye(3), by=[1, 1, 2]), ValueError, "binary"),
    ("by of other length", lambda: SlicedAccumulator().update([0, 1], [0.1, 0.2], by=[1, 2, 3]), ValueError,
     "one value per row"),
    ("by a string", lambda: SlicedAccumulator().update([0, 1], [0.1, 0.2], by="country"), TypeError, "by"),
    ("nothing seen", lambda: SlicedAccumulator().evaluate(), ValueError, "no row"),
    ("min_support NaN", lambda: _SMALL.evaluate(min_support=float("nan")), ValueError, "min_support"),
    ("min_support negative", lambda: _SMALL.evaluate(min_support=-1), ValueError, "min_support"),
    ("bad policy", lambda: _SMALL.evaluate(on_undefined="ignore"), ValueError, "on_undefined"),
    ("NaN score", lambda: SlicedAccumulator().update([0, 1], [0.1, np.nan], by=[1, 2]), ValueError, "y_score"),
    ("weights of other length", lambda: SlicedAccumulator().update([0, 1], [0.1, 0.2], by=[1, 2],
                                                                   sample_weight=[0.0]), ValueError, "sample_weight"),
]


@pytest.mark.parametrize("what,call,error,match", BAD_USE, ids=[c[0] for c in BAD_USE])
def test_bad_use_refused(what, call, error, match):
    with pytest.raises(error, match=match):
        call()


# ---------------------------------------------------------------------------
# relabel, table, keys: what a stream whose slice values are known only at its end needs
@pytest.mark.parametrize("seed,n,m,digits,missing", CASES[2:6])
def test_relabel_equals_in_memory_on_the_new_values(seed, n, m, digits, missing):
    """Slices renamed (some merged) after the stream give what the in-memory route gives on the
    renamed values, bit for bit; the state it came from is left as it was."""
    y, s, g, _ = _data(seed, n, m, missing=missing, digits=digits)
    acc = _stream(y, s, g, None, (n // 3,))
    before = acc.evaluate()
    rename = {v: None if v is None else f"g{int(v) % 3}" for v in set(g.tolist())}
    got = acc.relabel(lambda key: (rename[key[0]],)).evaluate()
    want = precall.evaluate(y, s, by=np.array([rename[v] for v in g.tolist()], dtype=object))
    assert _same(got, want)
    assert _same(acc.evaluate(), before)


def test_table_of_each_slice_is_its_rows_table():
    y, s, g, _ = _data(3, 200, 8, digits=2, missing=0.1)
    acc = _stream(y, s, g, None, (50, 120))
    assert sorted(acc.keys, key=repr) == sorted({(None if v is None else v,) for v in g.tolist()}, key=repr)
    for key in acc.keys:
        rows = np.array([v == key[0] if key[0] is not None else v is None for v in g.tolist()])
        want, got = precall.threshold_table(y[rows], s[rows]), acc.table(key)
        assert got.thresholds.tolist() == want.thresholds.tolist()
        assert got.tp.tolist() == want.tp.tolist() and got.fp.tolist() == want.fp.tolist()
    assert acc.table().tp.tolist() == precall.threshold_table(y, s).tp.tolist()


@pytest.mark.parametrize("call,error,match", [
    (lambda a: a.relabel("x"), TypeError, "mapping"),
    (lambda a: a.relabel(lambda key: key[0]), ValueError, "tuple of 1"),
    (lambda a: a.relabel(lambda key: (1, 2)), ValueError, "tuple of 1"),
    (lambda a: a.table(("nope",)), ValueError, "key"),
])
def test_relabel_and_table_refuse_bad_use(call, error, match):
    acc = SlicedAccumulator().update([0, 1, 1], [0.1, 0.9, 0.4], by=["a", "a", "b"])
    with pytest.raises(error, match=match):
        call(acc)


# ---------------------------------------------------------------------------
# precall.dask with by=
dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module", autouse=True)
def _synchronous():
    import dask

    with dask.config.set(scheduler="synchronous"):
        yield


def _frame(seed: int, n: int) -> "pd.DataFrame":
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"y": rng.integers(0, 2, n), "s": rng.random(n).round(2),
                       "country": rng.choice(["de", "fr", None, "us"], n), "device": rng.integers(0, 4, n),
                       "w": rng.random(n).round(1)})
    df.loc[df.country == "fr", "y"] = 0  # a slice without positives
    return df


@pytest.mark.parametrize("partitions", [1, 3, 7])
@pytest.mark.parametrize("by", [["country"], ["device"], ["country", "device"]])
def test_dask_dataframe_by_equals_in_memory(partitions, by):
    df = _frame(20 + partitions, 1500)
    ddf = dd.from_pandas(df, npartitions=partitions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = precall.evaluate(df.y, df.s, by=df[by], on_undefined="nan", min_support=100)
        got = precall.dask.evaluate(ddf.y, ddf.s, by=ddf[by], on_undefined="nan", min_support=100)
        one = precall.dask.evaluate(ddf.y, ddf.s, by=ddf[by[0]], on_undefined="nan")
        want_one = precall.evaluate(df.y, df.s, by=df[by[0]], on_undefined="nan")
    assert _same(got, want)
    assert _same(one, want_one) and one.columns == (by[0],)


@pytest.mark.parametrize("policy", ["warn", "nan"])
def test_dask_average_precision_roc_auc_and_tables_by_equal_in_memory(policy):
    """``precall.dask``'s average_precision, roc_auc (also partial) and threshold_table take ``by`` as
    ``evaluate`` does: the in-memory numbers and tables, from the merged sliced accumulator."""
    df = _frame(41, 1200)
    ddf = dd.from_pandas(df, npartitions=4)
    by, dby = df[["country", "device"]], ddf[["country", "device"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for f, kw in [("average_precision", {"method": "coco"}), ("average_precision", {"method": "voc2007"}),
                      ("roc_auc", {}), ("roc_auc", {"max_fpr": 0.3})]:
            got = getattr(precall.dask, f)(ddf.y, ddf.s, by=dby, on_undefined=policy, min_support=40, **kw)
            want = getattr(precall, f)(df.y, df.s, by=by, on_undefined=policy, min_support=40, **kw)
            assert got.to_dict() == want.to_dict(), (f, kw)
        got = precall.dask.threshold_table(ddf.y, ddf.s, by=dby, on_undefined=policy)
        want = precall.threshold_table(df.y, df.s, by=by, on_undefined=policy)
    assert got.to_dict() == want.to_dict() and got.names == want.names
    for name in want.names:
        np.testing.assert_array_equal(got[name].tp, want[name].tp)
        np.testing.assert_array_equal(got[name].thresholds, want[name].thresholds)
    with pytest.raises(ValueError, match="n_ranges"):
        precall.dask.threshold_table(ddf.y, ddf.s, by=dby, n_ranges=3)


def test_dask_arrays_by_equals_in_memory():
    import dask.array as da

    df = _frame(30, 1000)
    y, s = (da.from_array(df[c].to_numpy(), chunks=170) for c in ("y", "s"))
    g = da.from_array(df.device.to_numpy(), chunks=400)  # other chunks: rechunked to the labels'
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = precall.dask.evaluate(y, s, by=g, on_undefined="nan")
        want = precall.evaluate(df.y.to_numpy(), df.s.to_numpy(), by=df.device.to_numpy(), on_undefined="nan")
    assert _same(got, want)


def test_dask_weighted_by_close_to_in_memory():
    df = _frame(31, 1200)
    ddf = dd.from_pandas(df, npartitions=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = precall.dask.evaluate(ddf.y, ddf.s, sample_weight=ddf.w, by=ddf.country, on_undefined="nan")
        want = precall.evaluate(df.y, df.s, sample_weight=df.w, by=df.country, on_undefined="nan")
    assert got.names == want.names
    for m in UNGRIDDED:
        np.testing.assert_allclose(got.average_precision[m], want.average_precision[m], rtol=1e-12)
    # the same sums: the partitions' accumulators merged in order
    acc = SlicedAccumulator()
    for i in range(ddf.npartitions):
        part = ddf.partitions[i].compute()
        acc = acc.merge(SlicedAccumulator().update(part.y, part.s, sample_weight=part.w, by={"country": part.country}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _same(got, acc.evaluate(on_undefined="nan"))


def test_dask_accumulate_by_gives_a_sliced_accumulator():
    df = _frame(32, 500)
    ddf = dd.from_pandas(df, npartitions=5)
    acc = precall.dask.accumulate(ddf.y, ddf.s, by=ddf.country, split_every=2)
    assert isinstance(acc, SlicedAccumulator)
    assert _same(acc.evaluate(on_undefined="nan"), precall.evaluate(df.y, df.s, by=df.country, on_undefined="nan"))


@pytest.mark.parametrize("option", [{"prevalence": 0.1}, {"n_ranges": 4}])
def test_dask_by_refuses_range_options(option):
    df = _frame(33, 100)
    ddf = dd.from_pandas(df, npartitions=2)
    with pytest.raises(ValueError, match="not available with `by`"):
        precall.dask.evaluate(ddf.y, ddf.s, by=ddf.country, **option)


def _dates(seed: int, n: int) -> "pd.DataFrame":
    """Date slices with missing ones (NaT)."""
    df = _frame(seed, n)
    days = pd.to_datetime(["2020-01-01", "2020-01-02", "2020-02-29", None])
    df["d"] = days[np.random.default_rng(seed).integers(0, 4, n)]
    return df


@pytest.mark.parametrize("kind", ["datetime64", "tz", "Timestamp objects", "numpy days", "with a string column"])
def test_date_slices_ship_with_the_in_memory_names_and_numbers(kind):
    """Issue 23: datetime64 / Timestamp slice values (NaT missing) ship in the byte payload."""
    df = _dates(40, 600)
    d = {"datetime64": df.d, "tz": df.d.dt.tz_localize("Europe/Paris"), "Timestamp objects": df.d.astype(object),
         "numpy days": df.d.to_numpy().astype("datetime64[D]"), "with a string column": df.d}[kind]
    by = {"d": d, "country": df.country.to_numpy()} if kind == "with a string column" else {"d": d}
    y, s = df.y.to_numpy(), df.s.to_numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = precall.evaluate(y, s, by=by, on_undefined="nan")
        got = _stream(y, s, by, None, [150, 151, 420]).evaluate(on_undefined="nan")
    assert _same(got, want) and got.keys == want.keys and "(missing)" in "".join(want.names)
    acc = SlicedAccumulator().update(y, s, by=by)
    assert SlicedAccumulator.from_bytes(acc.to_bytes()).to_bytes() == acc.to_bytes()


def test_dask_date_slices_equal_in_memory():
    df = _dates(41, 900)
    ddf = dd.from_pandas(df, npartitions=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = precall.evaluate(df.y, df.s, by=df[["d"]], on_undefined="nan")
        got = precall.dask.evaluate(ddf.y, ddf.s, by=ddf[["d"]], on_undefined="nan")
    assert _same(got, want) and got.names[-1] == "(missing)" and got.names[0].startswith("2020-01-01")


@pytest.mark.parametrize("value", [{"date": "2020-13-01"}, {"datetime": 3}, {"week": "2020-W01"}])
def test_bad_date_slice_values_in_a_payload_refused(value):
    acc = SlicedAccumulator().update([0, 1], [0.2, 0.4], by={"d": pd.to_datetime(["2020-01-01", "2020-01-02"])})
    raw = acc.to_bytes()
    arrays = dict(np.load(io.BytesIO(raw)))
    meta = json.loads(arrays["meta"].tobytes())
    meta["keys"][0] = [value]
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with pytest.raises(ValueError, match="corrupt SlicedAccumulator payload"):
        SlicedAccumulator.from_bytes(buffer.getvalue())


@pytest.mark.parametrize("first, second", [
    (np.array([0, 1, 2]), np.array([1.0, np.nan, 2.0])),  # ints, then floats with NaN: '0.0', '1.0', ...
    (np.array([1.0, np.nan, 2.0]), np.array([0, 1, 2])),
    (np.array([True, False, True]), np.array([0, 1, 2])),  # bools among ints: 1, not True
])
@pytest.mark.parametrize("route", ["update", "merge", "shipped"])
def test_stream_names_numbers_as_the_concatenated_column(first, second, route):
    """Issue 23: the names do not depend on the first batch's dtype; they are those of
    precall.evaluate on the concatenated column (numpy's promotion of int and float: float)."""
    y, s = np.array([0, 1, 1, 0, 1, 1]), np.array([0.1, 0.2, 0.3, 0.1, 0.2, 0.3])
    a = SlicedAccumulator().update(y[:3], s[:3], by=first)
    b = SlicedAccumulator().update(y[3:], s[3:], by=second)
    got = {"update": lambda: a.update(y[3:], s[3:], by=second), "merge": lambda: a.merge(b),
           "shipped": lambda: SlicedAccumulator.from_bytes(a.to_bytes()).merge(
               SlicedAccumulator.from_bytes(b.to_bytes()))}[route]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = precall.evaluate(y, s, by=np.concatenate([first, second]), on_undefined="nan")
        assert _same(got.evaluate(on_undefined="nan"), want)
    assert got.evaluate(on_undefined="nan").keys == want.keys
    assert [type(k[0]) for k in got.evaluate(on_undefined="nan").keys if k[0] is not None] == \
        [type(k[0]) for k in want.keys if k[0] is not None]
