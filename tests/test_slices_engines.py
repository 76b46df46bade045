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
    ("key twice", lambda: _payload(_SMALL, meta=_meta(_SMALL, keys=[[["<U0", "a"]], [["<U0", "a"]]])), ValueError,
     "twice"),
    ("key width", lambda: _payload(_SMALL, meta=_meta(_SMALL, keys=[[["<U0", "a"], ["<i8", 1]]] * 2)), ValueError,
     "keys"),
    ("key without its type", lambda: _payload(_SMALL, meta=_meta(_SMALL, keys=[["a"], ["b"]])), ValueError, "keys"),
    ("key of another type", lambda: _payload(_SMALL, meta=_meta(_SMALL, keys=[[["<i8", 1]], [["<U0", "b"]]])),
     ValueError, "not among"),
    ("key not of its type", lambda: _payload(_SMALL, meta=_meta(_SMALL, keys=[[["<U0", 1]], [["<U0", "b"]]])),
     ValueError, "not of type"),
    ("empty string key", lambda: _payload(_SMALL, meta=_meta(_SMALL, keys=[[["<U0", ""]], [["<U0", "b"]]])),
     ValueError, "not of type"),
    ("object key without objects", lambda: _payload(_SMALL, meta=_meta(_SMALL, keys=[[["O", "a"]], [["<U0", "b"]]])),
     ValueError, "object value"),
    ("column type", lambda: _payload(_SMALL, meta=_meta(_SMALL, types=[["V8"]])), ValueError, "column type"),
    ("column types width", lambda: _payload(_SMALL, meta=_meta(_SMALL, types=[["<U1"], ["<U1"]])), ValueError,
     "types"),
    ("no types", lambda: _payload(_SMALL, meta=_meta(_SMALL, types=None)), ValueError, "types"),
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


# ---------------------------------------------------------------------------
# one answer for slice names: the stream names its slices as memory names the concatenated column
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_NS = ["2020-01-01", "2020-01-01T00:00:00.000000001", "2020-01-02T03:04:05.5", "NaT"]
_POOLS = {  # batch kinds: (dtype, values); numbers and texts that compare or print alike on purpose
    "int64": ("int64", [-1, 0, 1, 2, 300]),
    "int8": ("int8", [-1, 0, 1, 2]),
    "uint8": ("uint8", [0, 1, 2, 200]),
    "uint64": ("uint64", [0, 1, 2**63 + 1, 2**64 - 1]),
    "bool": ("bool", [True, False]),
    "float64": ("float64", [0.0, 1.0, 0.1, 2.5, np.nan, 1e300]),  # -0.0: test_a_float_zero_is_one_slice
    "float32": ("float32", [0.0, 1.0, 0.1, np.nan]),
    "NaN": ("float64", [np.nan]),
    "str": ("str", ["a", "1", "1.0", "True", "", "b"]),
    "object": ("object", [None, np.nan, 1, 1.0, True, False, 0, "a", "1", 2.5, -0.0, ""]),
    "object numbers": ("object", [1, 1.0, True, 2, 0.1, None]),
    "days": ("datetime64[D]", _NS),
    "seconds": ("datetime64[s]", _NS),
    "microseconds": ("datetime64[us]", _NS),
    "nanoseconds": ("datetime64[ns]", _NS),
}


def _batch(kind: str, picks: list[int]) -> np.ndarray:
    dtype, pool = _POOLS[kind]
    values = [pool[i % len(pool)] for i in picks]
    if dtype.startswith("datetime64"):
        return np.array(values, dtype="datetime64[ns]").astype(dtype)
    return np.array(values + [None], dtype=object)[:-1] if dtype == "object" else np.array(values, dtype=dtype)


def _concatenated(batches: list[np.ndarray]) -> np.ndarray:
    """The column as the user would pass it: ``np.concatenate`` of the batches (objects where
    numpy has no common type)."""
    try:
        return np.concatenate(batches)
    except TypeError:
        return np.concatenate(batches, dtype=object)


def _keys_and_names(r) -> str:
    return repr((r.names, r.keys))


@st.composite
def _sliced_batches(draw):
    n_batches = draw(st.integers(1, 5))
    sizes = [draw(st.integers(1, 5)) for _ in range(n_batches)]
    width = draw(st.integers(1, 2))
    columns = []
    for _ in range(width):
        kinds = draw(st.lists(st.sampled_from(sorted(_POOLS)), min_size=1, max_size=3))
        columns.append([_batch(kinds[i % len(kinds)], draw(st.lists(st.integers(0, 11), min_size=k, max_size=k)))
                        for i, k in enumerate(sizes)])
    n = sum(sizes)
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)))
    s = np.array(draw(st.lists(st.sampled_from([0.1, 0.2, 0.3, 0.7]), min_size=n, max_size=n)))
    order = draw(st.permutations(range(n_batches)))
    half = draw(st.integers(0, n_batches))
    relabel = draw(st.lists(st.integers(0, len(_RELABEL) - 1), min_size=60, max_size=60))
    return sizes, columns, y, s, order, half, draw(st.booleans()), relabel


_RELABEL = [0, 1, 2.5, "x", None, True, 1.0, "1"]  # a relabelling's new values: numpy types them together


@settings(max_examples=150, deadline=None)
@given(_sliced_batches())
def test_stream_names_keys_and_numbers_are_those_of_the_concatenated_column(case):
    """Random batches of slice columns of mixed types (ints of every width, bools, floats with
    NaN, strings, objects mixing all of them, datetimes of four units), fed in any order, as two
    halves merged, each half shipped through to_bytes / from_bytes: the names, keys (with their
    types) and numbers of ``precall.evaluate`` on ``np.concatenate`` of the batches."""
    sizes, columns, y, s, order, half, flip, relabel = case
    names = [f"c{j}" for j in range(len(columns))]
    by = {c: _concatenated(b) for c, b in zip(names, columns)}
    want = precall.evaluate(y, s, by=by, on_undefined="nan")
    bounds = np.cumsum([0] + sizes)
    halves = [SlicedAccumulator(), SlicedAccumulator()]
    for acc, batches in zip(halves, (order[:half], order[half:])):
        for i in batches:
            rows = slice(bounds[i], bounds[i + 1])
            acc.update(y[rows], s[rows], by={c: b[i] for c, b in zip(names, columns)})
    shipped = [SlicedAccumulator.from_bytes(a.to_bytes()) for a in halves]
    for a, b in ((halves[0], halves[1]), (shipped[0], shipped[1])):
        got = b.merge(a) if flip else a.merge(b)
        result = got.evaluate(on_undefined="nan")
        assert _keys_and_names(result) == _keys_and_names(want)
        assert _same(result, want)
        assert sorted(map(repr, got.keys)) == sorted(map(repr, want.keys))
    # relabel: the new values typed as numpy types a column of them (ints beside floats: floats)
    new = {key: tuple(_RELABEL[relabel[(i * len(names) + j) % 60]] for j in range(len(names)))
           for i, key in enumerate(want.keys)}
    codes = precall.slices.slice_codes(by, len(y))
    rows = [new[codes.keys[c]] for c in codes.codes.tolist()]
    want = precall.evaluate(y, s, by={c: [r[j] for r in rows] for j, c in enumerate(names)}, on_undefined="nan")
    result = got.relabel(new.__getitem__).evaluate(on_undefined="nan")
    assert _keys_and_names(result) == _keys_and_names(want) and _same(result, want)


def _both(batches, concatenate=_concatenated):
    """The in-memory result on the concatenated column and the stream's over the batches (the
    first alone, then shipped and merged with the rest)."""
    n = sum(len(b) for b in batches)
    y, s = np.arange(n) % 2, np.linspace(0.1, 0.9, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = precall.evaluate(y, s, by=concatenate(batches), on_undefined="nan")
        first, rest, at = SlicedAccumulator(), SlicedAccumulator(), 0
        for i, b in enumerate(batches):
            (rest if i else first).update(y[at:at + len(b)], s[at:at + len(b)], by=b)
            at += len(b)
        acc = SlicedAccumulator.from_bytes(first.to_bytes()).merge(rest) if len(batches) > 1 else first
        return want, SlicedAccumulator.from_bytes(acc.to_bytes()).evaluate(on_undefined="nan")


AUDIT = [  # (batches, the names of both routes, the keys' types)
    ("ints, then floats all NaN", [np.array([0, 1]), np.array([np.nan, np.nan])], ("0.0", "1.0", "(missing)"), float),
    ("ints, then strings", [np.array([1, 10, 2]), np.array(["a"])], ("1", "10", "2", "a"), str),
    ("ints, floats, then strings: '1', not '1.0'", [np.array([1]), np.array([2.5]), np.array(["a"])],
     ("1", "2.5", "a"), str),
    ("float32 among strings: its own shortest text", [np.array([0.1], np.float32), np.array(["a"])], ("0.1", "a"), str),
    ("NaN among strings: numpy's text", [np.array([np.nan, 1.0]), np.array(["a"])], ("1.0", "a", "nan"), str),
    ("objects keep their values", [np.array([1, 2], dtype=object), np.array([2.5, "a"], dtype=object)],
     ("2.5", "1", "2", "a"), None),
    ("an int array beside objects: ints", [np.array([1, 2]), np.array([2.5, None], dtype=object)],
     ("1", "2", "2.5", "(missing)"), None),
    ("bools among ints", [np.array([True, False]), np.array([2])], ("0", "1", "2"), int),
    ("int8 beside uint64 past 2**63: floats", [np.array([-1], np.int8), np.array([2**63 + 5], np.uint64)],
     ("-1.0", "9.223372036854776e+18"), float),
    ("int64 beside uint64: floats", [np.array([1]), np.array([5], np.uint64)], ("1.0", "5.0"), float),
    ("float32 beside float64", [np.array([0.1], np.float32), np.array([0.1])], ("0.1", "0.10000000149011612"), float),
    ("days beside nanoseconds", [np.array(["2020-01-01"], "datetime64[D]"),
                                 np.array(["2020-01-01T00:00:00.000000001"], "datetime64[ns]")],
     ("2020-01-01 00:00:00", "2020-01-01 00:00:00.000000001"), np.datetime64),
    ("dates beside numbers: objects", [np.array(["2020-01-01"], "datetime64[D]"), np.array([1])],
     ("2020-01-01", "1"), None),
]


@pytest.mark.parametrize("batches,names,kind", [c[1:] for c in AUDIT], ids=[c[0] for c in AUDIT])
@pytest.mark.parametrize("reverse", [False, True])
def test_audited_cases_name_as_the_concatenated_column(batches, names, kind, reverse):
    """The audit's cases (an all-NaN float batch after ints, numbers then strings, ...): the
    stream names its slices as ``precall.evaluate`` names ``np.concatenate`` of the batches,
    whose names are pinned here (numpy's promotion, its texts of numbers)."""
    want, got = _both(batches[::-1] if reverse else batches)
    assert want.names == names
    assert repr(got.keys) == repr(want.keys) and _same(got, want)
    if kind is not None:
        assert all(isinstance(k[0], kind) for k in want.keys if k[0] is not None)


def test_relabel_types_the_new_values_as_numpy_does():
    """relabel's new values take the type a list of them takes in ``precall.evaluate``'s ``by=``
    (the audit: relabel kept 1 beside 2.5 as an int; numbers beside strings: an object column)."""
    y, s = np.array([0, 1, 1, 0, 1, 0]), np.array([0.1, 0.9, 0.4, 0.3, 0.2, 0.6])
    g = np.array(["a", "b", "c", "a", "b", "c"])
    acc = SlicedAccumulator().update(y[:3], s[:3], by=g[:3]).update(y[3:], s[3:], by=g[3:])
    for new in ({"a": 1, "b": 2.5, "c": 1}, {"a": 1, "b": "x", "c": 2}, {"a": 1, "b": None, "c": 2.5},
                {"a": True, "b": 0, "c": 2}, {"a": np.datetime64("2020-01-01T00:00:00.000000001"), "b": None,
                                              "c": np.datetime64("2020-01-02", "ns")}):
        got = acc.relabel(lambda key: (new[key[0]],)).evaluate()
        want = precall.evaluate(y, s, by=[new[v] for v in g])
        assert got.names == want.names and repr(got.keys) == repr(want.keys) and _same(got, want), new
    assert acc.relabel(lambda key: ({"a": 1, "b": 2.5, "c": 1}[key[0]],)).keys == [(1.0,), (2.5,)]


@pytest.mark.parametrize("unit", ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps"])
def test_every_datetime64_unit_is_named_as_the_date_time_it_is(unit):
    """Nanoseconds (and finer) were named by their integer: every unit is named as Python
    prints a datetime (its fraction of a second only when not zero), the same through a stream
    and a payload, which keeps the keys' values and types."""
    times = np.array(["2020-01-02T03:04:05.123456789", "2020-01-02", "NaT"], "datetime64[ns]").astype(
        f"datetime64[{unit}]") if unit != "ps" else np.array(["1970-01-01T00:00:01.000000000001", "NaT"],
                                                             "datetime64[ps]")
    want, got = _both([times[:1], times[1:]])
    assert repr(got.keys) == repr(want.keys) and _same(got, want)
    assert not any(name.lstrip("-").isdigit() for name in want.names)
    expected = {"D": "2020-01-02", "s": "2020-01-02 03:04:05", "ms": "2020-01-02 03:04:05.123000",
                "us": "2020-01-02 03:04:05.123456", "ns": "2020-01-02 03:04:05.123456789",
                "ps": "1970-01-01 00:00:01.000000000001"}
    if unit in expected:
        assert expected[unit] in want.names


@pytest.mark.parametrize("unit", ["D", "h", "s", "ms", "us", "ns", "ps"])
def test_every_timedelta64_unit_is_named_as_python_prints_a_timedelta(unit):
    """A timedelta64 finer than Python's timedelta (nanoseconds: ``tolist`` gives integers) was named by
    its integer, and the same durations as microseconds or as a pandas column by their text: every unit
    is named as Python prints a timedelta (``-1 day, 23:59:59``; the fraction of a second to the unit's
    precision, only when not zero), the same through a stream and a payload."""
    pd = pytest.importorskip("pandas")
    ns = np.array([93784123456789, -1000000000, 0, 86400000000000], "timedelta64[ns]")  # 1 day 2:03:04.123...
    times = np.concatenate([ns.astype(f"timedelta64[{unit}]"), np.array(["NaT"], f"timedelta64[{unit}]")])
    want, got = _both([times[:2], times[2:]])
    assert repr(got.keys) == repr(want.keys) and _same(got, want)
    assert not any(name.lstrip("-").isdigit() for name in want.names)
    whole = {"D": "1 day, 0:00:00", "h": "1 day, 2:00:00", "s": "1 day, 2:03:04", "ms": "1 day, 2:03:04.123000",
             "us": "1 day, 2:03:04.123456", "ns": "1 day, 2:03:04.123456789", "ps": "1 day, 2:03:04.123456789"}
    assert whole[unit] in want.names and "(missing)" in want.names
    if unit not in ("D", "h", "ps"):
        assert "-1 day, 23:59:59" in want.names and "0:00:00" in want.names
    if unit in ("s", "ms", "us"):  # Python's timedelta holds them: its own str, as before
        assert set(want.names) - {"(missing)"} == {str(v) for v in times[:-1].tolist()}
    if unit in ("s", "us", "ns"):  # a pandas column of the same durations: the same slices
        y, s = np.arange(5) % 2, np.linspace(0.1, 0.9, 5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert precall.evaluate(y, s, by=pd.Series(times)).names == want.names
    assert [row["by_values"]["slice"] if "slice" in row["by_values"] else next(iter(row["by_values"].values()))
            for row in want.to_dict()["slices"]] == [None if n == "(missing)" else n for n in want.names]


def test_datetimes_past_year_9999_are_named_and_shipped():
    days = np.array(["2020-01-01", "10000-01-01", "NaT"], "datetime64[D]")
    want, got = _both([days[:1], days[1:]])
    assert want.names == ("2020-01-01", "10000-01-01", "(missing)")
    assert repr(got.keys) == repr(want.keys) and _same(got, want)


def test_a_float_zero_is_one_slice():
    """0.0 and -0.0 are equal: one slice, named '0.0' by both routes, whichever numpy's sort
    meets first.  (Among strings numpy would write -0.0 as '-0.0'; a stream, which has one
    slice for both zeros, writes '0.0': the one exception to the concatenation rule.)"""
    zeros = np.array([-0.0, 0.0] * 20)
    want, got = _both([zeros[:7], zeros[7:]])
    assert want.names == ("0.0",) and repr(got.keys) == repr(want.keys) and _same(got, want)
    assert precall.evaluate(np.arange(40) % 2, np.linspace(0, 1, 40), by=zeros[::-1]).names == ("0.0",)


@pytest.mark.parametrize("pandas", [False, True])
def test_equal_values_of_an_object_column_are_one_slice_keyed_by_the_widest(pandas):
    """1, 1.0 and True in an object column are one slice (numpy's sort and pandas' factorize
    kept whichever they met first): keyed 1.0 whatever the order of the rows, in memory and
    through a stream of batches each holding one of them."""
    rng = np.random.default_rng(5)
    values = np.array([1, 1.0, True, "a", 2, False, 0] * 10, dtype=object)
    seen = set()
    for _ in range(4):
        g = values[rng.permutation(values.size)]
        got = precall.evaluate(np.arange(g.size) % 2, np.linspace(0, 1, g.size), by=pd.Series(g) if pandas else g)
        seen.add(repr(got.keys))  # numbers beside strings: ordered by type name and text
        numbers = g[[isinstance(v, (int, float)) for v in g]]
        assert repr(precall.evaluate(np.arange(numbers.size) % 2, np.linspace(0, 1, numbers.size),
                                     by=pd.Series(numbers) if pandas else numbers).keys) == "((0,), (1.0,), (2,))"
    assert seen == {repr(((1.0,), (0,), (2,), ("a",)))}
    want, got = _both([np.array([1], dtype=object), np.array([True, "a"], dtype=object), np.array([1.0], dtype=object)])
    assert want.names == ("1.0", "a") and repr(got.keys) == repr(want.keys) and _same(got, want)


PANDAS_BATCHES = {  # batches of one pandas type: the stream as memory on pd.concat
    "Categorical": lambda: [pd.Series(["b", None, "a"], dtype="category"), pd.Series(["c", "a"], dtype="category")],
    "Int64 with NA": lambda: [pd.Series([1, None, 3], dtype="Int64"), pd.Series([2, 3], dtype="Int64")],
    "boolean with NA": lambda: [pd.Series([True, None], dtype="boolean"), pd.Series([False], dtype="boolean")],
    "string with NA": lambda: [pd.Series(["x", None], dtype="string"), pd.Series(["", "y"], dtype="string")],
    "object": lambda: [pd.Series([1, "a", None]), pd.Series([1.0, np.nan, "b"])],
    "datetime64[ns]": lambda: [pd.Series(pd.to_datetime(["2020-01-01 00:00:00.000000001", None])),
                               pd.Series(pd.to_datetime(["2020-01-02"]).as_unit("ns"))],
    "float, then all NaN": lambda: [pd.Series([1, 2]), pd.Series([np.nan])],
}


@pytest.mark.parametrize("kind", sorted(PANDAS_BATCHES))
def test_pandas_batches_name_as_their_concatenation(kind):
    want, got = _both(PANDAS_BATCHES[kind](), lambda batches: pd.concat(batches, ignore_index=True))
    assert got.names == want.names and repr(got.keys) == repr(want.keys) and _same(got, want)


def test_a_version_1_payload_is_read_with_its_columns_typed_as_numpy_types_its_values():
    acc = SlicedAccumulator().update([0, 1, 1, 0], [0.1, 0.9, 0.4, 0.3], by=[1, 1, 2.5, 2.5])
    with zipfile.ZipFile(io.BytesIO(acc.to_bytes())) as z:
        meta = json.loads(np.load(io.BytesIO(z.read("meta.npy"))).tobytes())
    meta.update(version=1, keys=[[1], [2.5]])
    del meta["types"]
    old = SlicedAccumulator.from_bytes(_payload(acc, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)))
    assert old.keys == [(1.0,), (2.5,)] and _same(old.evaluate(), acc.evaluate())


def test_unchanged_batches_reuse_the_slices_as_named():
    """The names are made once for a set of raw keys and batch types, not at every batch."""
    acc = SlicedAccumulator().update([0, 1], [0.1, 0.2], by=np.array([1, 2]))
    view = acc._view_of()
    acc.update([0, 1], [0.3, 0.4], by=np.array([2, 1]))
    assert acc._view_of() is view
    acc.update([0], [0.5], by=np.array([np.nan]))  # a new type: float
    assert acc._view_of() is not view and acc.keys == [(1.0,), (2.0,), (None,)]
