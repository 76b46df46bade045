"""Slices (``by=``): every number of every slice equals the function on the slice's rows, bit for bit."""

from __future__ import annotations

import io
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oracles
import precall
from precall._core.steps import segment_sums
from precall.slices import MISSING


def _same(a, b) -> bool:
    """Equal as objects, NaN equal to NaN, floats compared by their bits (repr)."""
    return repr(a) == repr(b)


# ---------------------------------------------------------------------------
# the exact segmented sum the kernels use for ragged batches
@pytest.mark.parametrize("lengths", [[0], [1], [7], [8], [9], [15, 16, 17], [127, 128, 129], [130, 1000, 4099],
                                     [0, 3, 0, 64, 65], [300_001], [2**17 + 5, 8, 0]])
@pytest.mark.parametrize("scale", [1.0, 1e-12, 1e16])
def test_segment_sums_equal_numpy_sums_bit_for_bit(lengths, scale):
    rng = np.random.default_rng(len(lengths) + int(sum(lengths)))
    x = rng.standard_normal(int(sum(lengths))) * scale * rng.choice([1.0, 1e-8, 1e8], size=int(sum(lengths)))
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    got = segment_sums(x, starts, lengths)
    want = np.array([np.sum(x[s:s + n]) for s, n in zip(starts, lengths)])
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()


def test_reduceat_would_not_do():
    """The reason for segment_sums: reduceat adds the first value apart (a test that can fail)."""
    x = np.random.default_rng(0).standard_normal(1000) * 1e8
    assert any(np.add.reduceat(x, [0])[0] != np.sum(x) for x in [x, x[::-1], x * 3.3])


# ---------------------------------------------------------------------------
# every slice equals precall.evaluate of its rows
# every route of the sort: 32-bit keys (float32, float16, small integers, float64 that are float32
# values, 64-bit integers in a 2**32 range) and dense ranks (other float64, wide 64-bit integers)
SCORE_KINDS = ["float64", "float32", "float16", "int8", "int64 narrow", "uint64 wide", "float64 wide", "negative"]


def _scores(rng, n, digits, kind):
    s = np.round(rng.random(n), digits)  # ties
    if kind in ("float32", "float16"):
        return s.astype(kind)
    if kind == "int8":
        return np.round(s * 200 - 100).astype(np.int8)
    if kind == "int64 narrow":
        return rng.integers(0, 10**digits + 1, n) + 2**40
    if kind == "uint64 wide":
        return rng.integers(0, 2**64 - 1, 10**digits + 1, dtype=np.uint64)[rng.integers(0, 10**digits + 1, n)]
    if kind == "float64 wide":
        return (rng.standard_normal(10**digits + 1) * 1e30)[rng.integers(0, 10**digits + 1, n)]
    if kind == "negative":
        return -s.astype(np.float32)
    return s


@st.composite
def sliced_data(draw):
    n = draw(st.integers(1, 120))
    m = draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    g = rng.integers(0, m, n)
    prev = rng.random(m)[g] * draw(st.sampled_from([0.0, 0.5, 1.0]))  # some slices one-class
    y = (rng.random(n) < prev).astype(int)
    if draw(st.booleans()):
        y[rng.random(n) < 0.5] = 1  # the other class missing from some slices
    digits = draw(st.integers(0, 3))
    s = _scores(rng, n, digits, draw(st.sampled_from(SCORE_KINDS)))
    w = None
    if draw(st.booleans()):
        w = np.round(rng.random(n) * 3, 1)  # zero weights set aside
    return y, s, g, w


def _subset(w, mask):
    return None if w is None else w[mask]


@settings(max_examples=60, deadline=None)
@given(sliced_data(), st.sampled_from(["group", "stable"]), st.sampled_from(["reference", "exact"]))
def test_every_slice_equals_evaluate_of_its_rows(data, ties, grid):
    y, s, g, w = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            sliced = precall.evaluate(y, s, sample_weight=w, by=g, ties=ties, recall_grid=grid, on_undefined="nan")
        except ValueError:  # all weights zero: the overall evaluation refuses as without by
            with pytest.raises(ValueError):
                precall.evaluate(y, s, sample_weight=w, ties=ties)
            return
        assert sum(sliced.n_samples) == y.shape[0]  # no row dropped
        for name in sliced.slices:
            mask = g == int(name)
            if w is not None and not (w[mask] > 0).any():
                continue  # evaluate refuses a slice whose weights are all 0; the slice is reported empty
            want = precall.evaluate(y[mask], s[mask], sample_weight=_subset(w, mask), ties=ties, recall_grid=grid,
                                    on_undefined="nan")
            assert _same(sliced[name], want), name
        assert _same(sliced.overall, precall.evaluate(y, s, sample_weight=w, ties=ties, recall_grid=grid,
                                                      on_undefined="nan"))


@settings(max_examples=40, deadline=None)
@given(sliced_data(), st.sampled_from(list(precall.AP_METHODS) + ["roc", "pauc"]), st.sampled_from(["group", "stable"]))
def test_each_metric_per_slice_equals_the_function(data, which, ties):
    y, s, g, w = data
    if which == "roc":
        def f(yy, ss, ww, **kw):
            return precall.roc_auc(yy, ss, sample_weight=ww, pos_label=1, on_undefined="nan", **kw)
    elif which == "pauc":
        def f(yy, ss, ww, **kw):
            return precall.roc_auc(yy, ss, sample_weight=ww, pos_label=1, max_fpr=0.3, on_undefined="nan", **kw)
    else:
        def f(yy, ss, ww, **kw):
            return precall.average_precision(yy, ss, sample_weight=ww, method=which, ties=ties, on_undefined="nan",
                                             **kw)
    try:
        sliced = f(y, s, w, by=g)
    except ValueError:
        return
    for name in sliced.slices:
        mask = g == int(name)
        if w is not None and not (w[mask] > 0).any():
            continue
        assert _same(sliced[name], f(y[mask], s[mask], _subset(w, mask))), name


def test_sizes_far_apart_and_many_slices():
    """A slice of 1e5 rows beside 3e4 slices of 3 rows: buckets keep memory O(rows); still exact."""
    rng = np.random.default_rng(5)
    g = np.concatenate([np.zeros(100_000, dtype=int), np.repeat(np.arange(1, 30_001), 3)])
    n = g.shape[0]
    y = (rng.random(n) < 0.4).astype(int)
    s = rng.random(n)
    r = precall.average_precision(y, s, by=g, on_undefined="nan")
    for name in ["0", "1", "777", "30000"]:
        mask = g == int(name)
        assert _same(r[name], precall.average_precision(y[mask], s[mask], on_undefined="nan"))
    text = r.to_text(k=3)
    assert len(text.splitlines()) <= 12 and max(map(len, text.splitlines())) <= 80
    assert "more ranked slices" in text
    assert len(r.to_dict()["slices"]) == 30_001  # everything with JSON


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kernel", ["numpy", "numba"])
def test_more_slices_than_16_bit_codes(dtype, kernel):
    """Past 2**16 slices the numpy route sorts twice (its radix sort of the codes takes 16 bits):
    each slice and all rows are still exact, with ties, float32 keys and float64 ranks."""
    if kernel == "numba":
        pytest.importorskip("numba")
    from precall._core import backend

    rng = np.random.default_rng(11)
    g = np.concatenate([np.repeat(np.arange(70_000), 2), np.full(3_000, 70_000)])
    n = g.shape[0]
    y = (rng.random(n) < 0.4).astype(int)
    s = np.round(rng.random(n), 3).astype(dtype) if dtype == np.float32 else rng.random(n)
    previous = backend.set_kernel(kernel)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = precall.evaluate(y, s, by=g, on_undefined="nan")
            for name in ["0", "12345", "69999", "70000"]:
                mask = g == int(name)
                assert _same(r[name], precall.evaluate(y[mask], s[mask], on_undefined="nan")), name
            assert _same(r.overall, precall.evaluate(y, s, on_undefined="nan"))
    finally:
        backend.set_kernel(previous)


@pytest.mark.parametrize("where", ["first rows", "past the first 1024 rows", "negative"])
@pytest.mark.parametrize("kernel", ["numpy", "numba"])
def test_float64_scores_beyond_float32_range_warn_nothing(where, kernel):
    """Scores past float32's range are not float32 values (their cast overflows to inf): the
    slices take the 64-bit route with no RuntimeWarning (users run with -W error)."""
    if kernel == "numba":
        pytest.importorskip("numba")
    from precall._core import backend

    rng = np.random.default_rng(3)
    n = 3000
    s = np.round(rng.random(n), 2)
    at = {"first rows": 1, "past the first 1024 rows": 2000, "negative": 2000}[where]
    s[at] = -1e308 if where == "negative" else 1e308
    y = rng.integers(0, 2, n)
    g = rng.integers(0, 4, n)
    previous = backend.set_kernel(kernel)
    try:
        for ties in ("group", "stable"):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                r = precall.evaluate(y, s, by=g, ties=ties)
                ap = precall.average_precision(y, s, by=g, ties=ties)
                auc = precall.roc_auc(y, s, by=g)
            for name in r.slices:
                mask = g == int(name)
                assert _same(r[name], precall.evaluate(y[mask], s[mask], ties=ties)), name
                assert _same(ap[name], precall.average_precision(y[mask], s[mask], ties=ties)), name
                assert _same(auc[name], precall.roc_auc(y[mask], s[mask])), name
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            small = precall.average_precision([0, 1, 1, 0], [0.1, 1e308, 0.3, 0.4], by=list("aabb"))
        assert small["a"] == 1.0 and small["b"] == 0.5
    finally:
        backend.set_kernel(previous)


# ---------------------------------------------------------------------------
# intersections, names, missing values
def test_intersections_of_two_columns():
    rng = np.random.default_rng(1)
    n = 600
    country = rng.choice(["FR", "DE", "US"], n)
    device = rng.choice(["ios", "android"], n)
    y = (rng.random(n) < 0.4).astype(int)
    s = rng.random(n)
    r = precall.evaluate(y, s, by={"country": country, "device": device})
    assert len(r) == 6 and r.columns == ("country", "device")
    for c in ["FR", "DE", "US"]:
        for d in ["ios", "android"]:
            mask = (country == c) & (device == d)
            assert _same(r[(c, d)], precall.evaluate(y[mask], s[mask]))
            assert f"country={c}, device={d}" in r.slices


@pytest.mark.parametrize("missing", [None, float("nan"), ""])
def test_missing_values_are_their_own_slice(missing):
    by = np.array(["a", missing, "b", "a", missing, "b"], dtype=object)
    y = np.array([1, 0, 1, 0, 1, 0])
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    r = precall.evaluate(y, s, by=by)
    assert r.slices == ("a", "b", MISSING)
    mask = np.array([False, True, False, False, True, False])
    assert _same(r[MISSING], precall.evaluate(y[mask], s[mask]))
    assert r[(None,)] == r[MISSING]


def test_float_and_pandas_missing():
    pd = pytest.importorskip("pandas")
    y = np.array([1, 0, 1, 0, 1, 0])
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    for by in (np.array([1.0, np.nan, 2.0, 1.0, np.nan, 2.0]),
               pd.Series(["x", pd.NA, "y", "x", None, "y"], dtype="string", name="site"),
               pd.Series(pd.Categorical(["x", None, "y", "x", None, "y"]), name="site")):
        r = precall.evaluate(y, s, by=by)
        assert r.slices[-1] == MISSING and int(r.n_samples[-1]) == 2


def test_data_frame_columns_and_to_frame():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": ["x", "y", "x", "y"], "b": [1, 1, 2, 2]})
    y, s = [1, 0, 0, 1], [0.9, 0.3, 0.4, 0.8]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", precall.UndefinedMetricWarning)
        r = precall.evaluate(y, s, by=df)
    frame = r.to_frame()
    assert frame.index.tolist() == [("x", 1), ("x", 2), ("y", 1), ("y", 2)]
    assert frame["slice"].tolist() == list(r.slices)
    assert frame.attrs["overall"]["slice"] == "overall"
    assert frame.attrs["overall"]["AP step"] == precall.average_precision(y, s)


# ---------------------------------------------------------------------------
# the slices' values in to_frame / to_dict / to_json / to_csv, against pandas' groupby
def _by_frame(n: int = 900, seed: int = 11):
    """Slice columns of every kind: strings with missing values, integers, integers with missing
    values (pandas' Int64), booleans, datetimes with NaT, date objects."""
    pd = pytest.importorskip("pandas")
    import datetime

    rng = np.random.default_rng(seed)
    days = pd.to_datetime(["2024-01-01", "2024-02-29", "2024-03-01"])
    df = pd.DataFrame({
        "country": pd.Series(rng.choice(np.array(["FR", "DE", "US", None], dtype=object), n), dtype=object),
        "week": rng.integers(1, 4, n),
        "week_na": pd.array(np.where(rng.random(n) < 0.15, None, rng.integers(1, 4, n)), dtype="Int64"),
        "mobile": rng.random(n) < 0.5,
        "day": pd.Series(days[rng.integers(0, 3, n)]).where(rng.random(n) > 0.1),
        "date": [datetime.date(2024, 1, int(d)) for d in rng.integers(1, 3, n)],
    })
    y = (rng.random(n) < 0.5).astype(int)
    s = np.round(rng.random(n), 2)
    return df, y, s


def _plain_key(key, width):
    """A groupby or frame index entry as a tuple, missing (NaN, NaT, NA) as None."""
    pd = pytest.importorskip("pandas")
    key = key if isinstance(key, tuple) else (key,)
    assert len(key) == width
    return tuple(None if pd.isna(v) else v for v in key)


BY_SETS = [["country"], ["week"], ["week_na"], ["mobile"], ["day"], ["date"], ["country", "week"],
           ["day", "mobile"], ["country", "week_na", "day"], ["mobile", "date", "country"]]


@pytest.mark.parametrize("cols", BY_SETS, ids=",".join)
def test_to_frame_index_is_pandas_groupby_index(cols):
    """One level per ``by`` column named after it, the original values in pandas' groupby order
    (sorted, missing last), each row the numbers of that group's rows."""
    pd = pytest.importorskip("pandas")
    df, y, s = _by_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", precall.UndefinedMetricWarning)
        r = precall.evaluate(y, s, by=df[cols])
    frame = r.to_frame()
    groups = df.assign(_y=y, _s=s).groupby(cols, dropna=False, sort=True)
    sizes = groups.size()
    assert list(frame.index.names) == cols and frame.index.nlevels == len(cols)
    assert isinstance(frame.index, pd.MultiIndex) == (len(cols) > 1)
    assert [_plain_key(k, len(cols)) for k in frame.index] == [_plain_key(k, len(cols)) for k in sizes.index]
    assert frame["n"].tolist() == sizes.tolist()
    want_ap = [precall.average_precision(g._y.to_numpy(), g._s.to_numpy(), on_undefined="nan")
               for _, g in groups]
    assert _same(frame["AP step"].tolist(), [0.0 if math.isnan(v) else v for v in want_ap])
    assert frame["slice"].tolist() == list(r.names) and "overall" not in frame["slice"].tolist()
    # the values' types: integers stay integers (with or without a missing value), dates dates
    for j, col in enumerate(cols):
        values = [k[j] for k in map(lambda k: _plain_key(k, len(cols)), frame.index) if k[j] is not None]
        kinds = {"country": str, "week": (int, np.integer), "week_na": (int, np.integer), "mobile": (bool, np.bool_),
                 "day": pd.Timestamp, "date": type(df.date[0])}
        assert values and all(isinstance(v, kinds[col]) for v in values), col
        assert not any(isinstance(v, float) for v in values), col
        level = frame.index.levels[j] if len(cols) > 1 else frame.index
        if col == "week" or (col == "mobile" and len(cols) > 1):
            assert level.dtype == sizes.index.get_level_values(j).dtype, col
        if col == "day":
            assert level.dtype.kind == "M"


@pytest.mark.parametrize("cols", [["country"], ["week_na", "mobile"], ["country", "day", "date"]], ids=",".join)
def test_to_json_by_values_are_the_groups_values(cols):
    pd = pytest.importorskip("pandas")
    df, y, s = _by_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", precall.UndefinedMetricWarning)
        r = precall.evaluate(y, s, by=df[cols])
    d = json.loads(r.to_json())
    sizes = df.groupby(cols, dropna=False, sort=True).size()

    def as_json(v):
        if v is None:
            return None
        if hasattr(v, "isoformat"):
            return v.isoformat()
        return v.item() if isinstance(v, np.generic) else v

    want = [dict(zip(cols, map(as_json, _plain_key(k, len(cols))))) for k in sizes.index]
    assert [row["by_values"] for row in d["slices"]] == want
    assert [row["n"] for row in d["slices"]] == sizes.tolist()
    assert "by_values" not in d["overall"] and d["by"] == cols
    for row in d["slices"]:
        for col, v in row["by_values"].items():
            assert v is None or type(v) is {"country": str, "week_na": int, "mobile": bool, "day": str,
                                            "date": str}[col], (col, v)
    if "day" in cols:
        assert {row["by_values"]["day"] for row in d["slices"]} == {
            "2024-01-01T00:00:00", "2024-02-29T00:00:00", "2024-03-01T00:00:00", None}


def test_to_csv_round_trips_through_read_csv():
    """``read_csv`` of ``to_csv`` without the overall row (the first) and indexed by the by
    columns is ``to_frame``: values, order, every number to the bit; the overall row is
    ``frame.attrs["overall"]``."""
    pd = pytest.importorskip("pandas")
    df, y, s = _by_frame()
    cols = ["country", "week", "mobile", "day"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", precall.UndefinedMetricWarning)
        r = precall.evaluate(y, s, by=df[cols])
    text = r.to_csv()
    assert text.splitlines()[0].startswith("country,week,mobile,day,slice,n,n_pos,")
    want = r.to_frame()
    got = pd.read_csv(io.StringIO(text), skiprows=[1], index_col=cols, parse_dates=["day"],
                      dtype={"slice": str})
    assert [_plain_key(k, 4) for k in got.index] == [_plain_key(k, 4) for k in want.index]
    assert [lvl.dtype.kind for lvl in got.index.levels] == [lvl.dtype.kind for lvl in want.index.levels]
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want.reset_index(drop=True), check_exact=True)
    overall = pd.read_csv(io.StringIO(text), nrows=1).iloc[0]
    assert overall["slice"] == "overall" and all(pd.isna(overall[c]) for c in cols)
    for key, value in want.attrs["overall"].items():
        assert _same(float(overall[key]), float(value)) if key != "slice" else overall[key] == value, key


def test_a_by_column_named_like_a_number_column():
    """A ``by`` column named ``n``, ``slice`` or like a metric is headed ``by NAME`` in the frame and
    the CSV (never two columns of one name: ``reset_index`` works); ``by_values`` keeps its name."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(8)
    m = 400
    by = {"n": rng.integers(0, 2, m), "slice": rng.choice(["a", "b"], m), "AP step": rng.random(m) < 0.5,
          "by n": rng.integers(5, 7, m)}
    y, s = (rng.random(m) < 0.5).astype(int), rng.random(m)
    r = precall.evaluate(y, s, by=by)
    frame = r.to_frame()
    assert list(frame.index.names) == ["by n", "by slice", "by AP step", "by by n"]
    flat = frame.reset_index()
    assert flat.columns.is_unique and flat["n"].tolist() == frame["n"].tolist()
    sizes = pd.DataFrame(by).groupby(list(by)).size()
    assert frame["n"].tolist() == sizes.tolist() and flat["by n"].tolist() == [k[0] for k in sizes.index]
    header = r.to_csv().splitlines()[0].split(",")
    assert header[:6] == ["by n", "by slice", "by AP step", "by by n", "slice", "n"]
    assert len(set(header)) == len(header)
    rows = json.loads(r.to_json())["slices"]
    assert [list(row["by_values"]) for row in rows] == [list(by)] * len(rows)
    assert [row["n"] for row in rows] == sizes.tolist()
    assert [row["by_values"]["n"] for row in rows] == [int(k[0]) for k in sizes.index]
    # one metric: its column is its key
    values = precall.average_precision(y, s, by={"step": by["n"]})
    assert values.to_frame().index.name == "by step" and "step" in values.to_frame().columns
    # two columns of one name (two Series named alike)
    twice = precall.evaluate(y, s, by=[pd.Series(by["n"], name="x"), pd.Series(by["slice"], name="x")])
    assert list(twice.to_frame().index.names) == ["x", "by x"]
    assert list(json.loads(twice.to_json())["slices"][0]["by_values"]) == ["x", "by x"]


def _whole_table_outputs(r) -> tuple[dict, str]:
    """``to_dict()`` and ``to_csv()`` as they were made before the slices were written a block at a
    time: every slice's row at once (``_table()``), then every dict or CSV row."""
    import csv

    from precall.slices import _csv_table, _json_value, slice_dicts

    header, rows = r._table()
    whole = {"by": list(r.columns), "min_support": r.min_support,
             "overall": dict(zip(header, map(_json_value, rows[0]))),
             "slices": slice_dicts(header, rows[1:], r.keys, r.columns),
             "ranked_worst_first": [r.names[i] for i in r.ranked]}
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    head, cells = _csv_table(header, rows[1:], r.keys, r.columns, overall=rows[0])
    writer.writerow(head)
    writer.writerows(cells)
    return whole, buf.getvalue()


@pytest.mark.parametrize("block", [1, 7, 10_000])
def test_to_json_and_to_csv_a_block_at_a_time_are_the_whole_texts(tmp_path, monkeypatch, block):
    """``to_json`` / ``to_csv`` make and write ``BLOCK`` slices at a time: the bytes of ``json.dumps``
    of the whole :meth:`to_dict` for any of its options, and of the CSV of every row at once, returned
    or written to a path; every kind of sliced result, names with quotes, unicode and missing values."""
    import precall.slices

    monkeypatch.setattr(precall.slices, "BLOCK", block)
    rng = np.random.default_rng(2)
    n = 1200
    y, s = (rng.random(n) < 0.4).astype(int), np.round(rng.random(n), 2)
    by = {"name": rng.choice(np.array(['q"uote', "b\\s", "caf\u00e9", "\u6771", "tab\t", "e\x1b", None, "overall",
                                       "(missing)", "1"], dtype=object), n),
          "week": np.where(rng.random(n) < 0.1, np.nan, rng.integers(0, 4, n))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", precall.UndefinedMetricWarning)
        results = [precall.evaluate(y, s, by=by, min_support=3), precall.average_precision(y, s, by=by),
                   precall.threshold_table(y, s, by=by),
                   precall.evaluate(rng.integers(0, 3, n), rng.random((n, 3)), by=by)]
    options = [{}, {"indent": 2}, {"indent": "\t", "sort_keys": True}, {"separators": (",", ":")},
               {"ensure_ascii": False, "indent": 0}]
    for r in results:
        assert len(r.names) > 30
        whole, text = _whole_table_outputs(r)
        assert r.to_dict() == whole
        for kwargs in options:
            assert r.to_json(**kwargs) == json.dumps(whole, **kwargs), kwargs
        assert json.loads(r.to_json()) == whole
        assert r.to_json(tmp_path / "r.json", indent=2) is None
        assert (tmp_path / "r.json").read_text(encoding="utf-8") == json.dumps(whole, indent=2)
        assert r.to_csv() == text
        assert r.to_csv(tmp_path / "r.csv") is None
        assert (tmp_path / "r.csv").read_text(encoding="utf-8") == text
        header, cells = r.csv_rows(extra=["x"], start=5, stop=5 + block)
        assert cells == r.csv_rows(extra=["x"])[1][5:5 + block] and header == r.csv_rows(extra=["x"])[0]


def test_every_sliced_result_has_the_same_index_and_by_values():
    pd = pytest.importorskip("pandas")
    from precall import stats

    df, y, s = _by_frame(600, 12)
    by = df[["country", "week"]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", precall.UndefinedMetricWarning)
        want = precall.evaluate(y, s, by=by)
        multi = precall.evaluate(np.where(y == 1, 2, (s > 0.5).astype(int)), np.random.default_rng(1).random(
            (y.size, 3)), by=by)
        results = [precall.average_precision(y, s, by=by), precall.roc_auc(y, s, by=by),
                   precall.threshold_table(y, s, by=by), multi,
                   precall.SlicedAccumulator().update(y, s, by=by).evaluate(),
                   stats.compare_slices(y, s, by=by, n_resamples=20)]
    index = want.to_frame().index
    by_values = [row["by_values"] for row in want.to_dict()["slices"]]
    for result in results:
        frame = result.to_frame()
        assert frame.index.equals(index) and list(frame.index.names) == ["country", "week"], type(result)
        assert frame["slice"].tolist() == list(want.names), type(result)
        assert [row["by_values"] for row in result.to_dict()["slices"]] == by_values, type(result)
        assert [row["slice"] for row in result.to_dict()["slices"]] == list(want.names), type(result)


def test_datetime64_ns_slices_are_dates():
    """numpy's ``datetime64[ns]`` (``tolist`` gives integers) names and keys its slices by dates."""
    pd = pytest.importorskip("pandas")
    days = np.array(["2024-01-01", "2024-01-02", "NaT"], dtype="datetime64[ns]")[np.arange(12) % 3]
    y, s = np.arange(12) % 2, np.linspace(0, 1, 12)
    r = precall.evaluate(y, s, by={"day": days})
    assert r.names == ("2024-01-01 00:00:00", "2024-01-02 00:00:00", MISSING)
    assert r.to_frame().index.dtype.kind == "M" and pd.isna(r.to_frame().index[-1])
    assert [row["by_values"]["day"] for row in r.to_dict()["slices"]] == ["2024-01-01T00:00:00",
                                                                         "2024-01-02T00:00:00", None]
    streamed = precall.SlicedAccumulator().update(y[:5], s[:5], by={"day": days[:5]}).update(
        y[5:], s[5:], by={"day": days[5:]}).evaluate()
    assert streamed.keys == r.keys and streamed.names == r.names


# ---------------------------------------------------------------------------
# undefined slices, min_support, output
def test_undefined_slices_follow_the_policy_once():
    y = np.array([1, 0, 1, 1, 0, 0])
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    g = np.array([0, 0, 1, 1, 2, 2])  # slice 1: positives only; slice 2: negatives only
    with pytest.warns(precall.UndefinedMetricWarning) as record:
        r = precall.evaluate(y, s, by=g)
    assert len([w for w in record if "slice" in str(w.message)]) == 2  # AP once, ROC-AUC once
    assert r.average_precision["step"][2] == 0.0 and math.isnan(r.roc_auc[1]) and math.isnan(r.roc_auc[2])
    assert r.ranked.tolist() == [0, 1]  # slice 2 has no positives: reported, not ranked
    with pytest.raises(ValueError, match="undefined in 1 slice"):
        precall.average_precision(y, s, by=g, on_undefined="raise")
    assert precall.roc_auc(y, s, by=g, on_undefined=0.5).values.tolist() == [1.0, 0.5, 0.5]


def test_min_support_reports_but_does_not_rank():
    rng = np.random.default_rng(2)
    g = np.repeat([0, 1, 2], [100, 5, 100])
    y = (rng.random(205) < 0.5).astype(int)
    s = rng.random(205)
    r = precall.evaluate(y, s, by=g, min_support=10)
    assert 1 not in r.ranked.tolist() and len(r.ranked) == 2
    assert not math.isnan(r.average_precision["step"][1])
    order = r.ranked.tolist()
    assert r.average_precision["step"][order[0]] <= r.average_precision["step"][order[1]]


def test_outputs_round_trip():
    rng = np.random.default_rng(3)
    g = rng.choice(["a\x1b[31m", "b", "c"], 300)  # a hostile name stays printable
    y = (rng.random(300) < 0.5).astype(int)
    s = rng.random(300)
    r = precall.evaluate(y, s, by=g)
    d = json.loads(r.to_json())
    assert d["overall"]["AP step"] == r.overall.average_precision["step"]
    assert [row["slice"] for row in d["slices"]] == list(r.slices)
    csv_text = r.to_csv()
    # an unnamed column is named "slice" (the text's title), headed "by slice" beside the names
    assert csv_text.splitlines()[0].startswith("by slice,slice,n,n_pos") and len(csv_text.splitlines()) == 5
    assert [row["by_values"] for row in d["slices"]] == [{"slice": v} for v in sorted(set(g.tolist()))]
    text = str(r)
    assert "\x1b" not in text and max(map(len, text.splitlines())) <= 80


# ---------------------------------------------------------------------------
# bad input: one message naming the parameter
@pytest.mark.parametrize("by, exc, match", [
    ("country", TypeError, "`by` must be"),
    (np.zeros(3), ValueError, "one value per row"),
    (np.zeros((4, 2)), ValueError, "1-D"),
    ([np.zeros(4), np.zeros(5)], ValueError, "one value per row"),
])
def test_bad_by(by, exc, match):
    with pytest.raises(exc, match=match):
        precall.evaluate([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], by=by)


@pytest.mark.parametrize("value, exc", [(-1, ValueError), (1.5, ValueError), (float("nan"), ValueError),
                                        ("3", TypeError), (True, TypeError), (None, TypeError)])
def test_bad_min_support_and_k(value, exc):
    with pytest.raises(exc, match="`min_support`"):
        precall.evaluate([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], by=[0, 0, 1, 1], min_support=value)
    r = precall.evaluate([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], by=[0, 0, 1, 1])
    with pytest.raises(exc, match="`k`"):
        r.to_text(k=value if value != -1 else 0)


def test_by_refuses_prevalence_and_multiclass_where_binary_only():
    with pytest.raises(ValueError, match="`by` applies to binary input"):
        precall.average_precision([0, 1, 2], [[.8, .1, .1], [.2, .7, .1], [.1, .2, .7]], by=[0, 0, 1])
    with pytest.raises(ValueError, match="`prevalence`"):
        precall.evaluate([0, 1, 2], [[.8, .1, .1], [.2, .7, .1], [.1, .2, .7]], by=[0, 0, 1], prevalence=0.2)
    with pytest.raises(ValueError, match="`prevalence`"):
        precall.average_precision([0, 1, 0, 1], [0.1, 0.2, 0.3, 0.4], by=[0, 0, 1, 1], prevalence=0.1)


# ---------------------------------------------------------------------------
# slice codes: counting, pandas factorising and np.unique give the oracle's codes
def _oracle_codes(columns):
    """Each column's distinct values sorted (missing last), the present combinations in order."""
    def missing(v):
        if v is None or (isinstance(v, str) and v == ""):
            return True
        try:
            return bool(v != v)
        except TypeError:  # pandas' NA
            return True
    per_column = []
    for col in columns:
        vals = [None if missing(v) else (v.item() if hasattr(v, "item") else v) for v in list(col)]
        distinct = sorted({v for v in vals if v is not None})
        per_column.append([distinct.index(v) if v is not None else len(distinct) for v in vals])
        per_column[-1] = (per_column[-1], distinct + [None])
    rows = list(zip(*[c for c, _ in per_column]))
    present = sorted(set(rows))
    keys = [tuple(levels[i] for i, (_, levels) in zip(t, per_column)) for t in present]
    return [present.index(r) for r in rows], keys


def _by_columns():
    rng = np.random.default_rng(7)
    n = 40
    cases = {
        "int8 full range": np.array([-128, 127, 0, 5, -128] * 8, dtype=np.int8),
        "int16 negative": rng.choice(np.array([-300, -299, 7, 32767], dtype=np.int16), n),
        "uint32 offset": rng.choice(np.array([4_000_000_000, 4_000_000_005, 2**32 - 1], dtype=np.uint32), n),
        "int64 wide": rng.choice([10**15, -5, 3, -(2**62)], n),
        "uint64 top": rng.choice(np.array([2**64 - 1, 0, 2**63], dtype=np.uint64), n),
        "bool": rng.random(n) < 0.3,
        "bool one value": np.ones(n, dtype=bool),
        "float NaN": rng.choice([1.5, np.nan, -2.0], n),
        "str empty": rng.choice(["b", "", "a"], n),
        "object mixed missing": rng.choice(np.array(["x", None, "", float("nan"), "w"], dtype=object), n),
    }
    pd = pytest.importorskip("pandas")
    cases.update({
        "pandas int": pd.Series(rng.integers(-3, 3, n)),
        "pandas string NA": pd.Series(rng.choice(["q", "p", None, ""], n), dtype="string"),
        "pandas category": pd.Series(pd.Categorical(rng.choice(["z", "y", None], n), categories=["z", "y", "x"])),
        "pandas object": pd.Series(rng.choice(np.array(["b", None, "", float("nan"), "a"], dtype=object), n)),
        "pandas Int64 NA": pd.Series(pd.array(rng.choice([1, 2, None], n), dtype="Int64")),
    })
    return cases


@pytest.mark.parametrize("first", ["int8 full range", "int16 negative", "uint32 offset", "uint64 top",
                                   "bool one value", "pandas category", "str empty"])
@pytest.mark.parametrize("second", [None, "int64 wide", "float NaN", "object mixed missing", "pandas string NA",
                                    "pandas object", "pandas Int64 NA", "bool", "pandas int"])
@pytest.mark.parametrize("kernel", ["numpy", "numba"])
def test_slice_codes_equal_the_oracle(first, second, kernel):
    """Both kernels' slice codes (integers are ranged and counted by compiled passes) equal the oracle's."""
    if kernel == "numba":
        pytest.importorskip("numba")
    from precall._core import backend

    cases = _by_columns()
    columns = [cases[first]] + ([] if second is None else [cases[second]])
    previous = backend.set_kernel(kernel)
    try:
        got = precall.slices.slice_codes(columns if second else columns[0], 40)
    finally:
        backend.set_kernel(previous)
    codes, keys = _oracle_codes([np.asarray(c.astype(object) if hasattr(c, "astype") and hasattr(c, "cat")
                                            else c, dtype=object) for c in columns])
    assert got.codes.tolist() == codes
    assert list(got.keys) == keys
    assert got.rows().tolist() == [codes.count(c) for c in range(len(keys))]  # counted once, as they were coded


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3000), st.sampled_from([0.0, 0.5, 1.0, 7.0, 123.25, 1e6, 2.0**53 + 2, 1 / 3,
                                                                  1e-300, 2.0**52 + 1, 3e300])),
                min_size=1, max_size=8),
       st.sampled_from(["group", "stable"]), st.sampled_from(["reference", "exact"]), st.sampled_from(["numpy", "numba"]))
def test_min_average_precisions_equal_the_public_minimum(pairs, ties, grid, kernel):
    """The minimum AP of many pairs at once (what evaluate and every slice report) equals
    ``min_average_precision`` of each pair, bit for bit, by either kernel."""
    pytest.importorskip("numba")
    from precall._core import backend
    from precall._core.evaluation import min_average_precisions

    pairs = pairs + [(2**64, 5.0), (2**21, 0.5)]  # a weight sum past int64, Euler-Maclaurin's tail
    p = np.array([a for a, _ in pairs], dtype=float)
    n = np.array([b for _, b in pairs])
    previous = backend.set_kernel(kernel)
    try:
        got = min_average_precisions(p, n, np.ones(p.size, dtype=bool), ties, grid)
        # one pair at a time: evaluate's route (the one step's numbers written out)
        one = [min_average_precisions(p[i:i + 1], n[i:i + 1], np.ones(1, dtype=bool), ties, grid)
               for i in range(p.size)]
    finally:
        backend.set_kernel(previous)
    for m in precall.AP_METHODS:
        want = [precall.min_average_precision(int(a), b, method=m, ties=ties, recall_grid=grid) for a, b in pairs]
        assert [repr(v) for v in got[m].tolist()] == [repr(v) for v in want], m
        assert [repr(float(o[m][0])) for o in one] == [repr(v) for v in want], m


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 2**60).map(float) | st.sampled_from([1.0, 3.0, 2.0**53, 2.0**53 + 2, 1e300]),
       st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False) |
       st.sampled_from([0.5, 1.0, 7.0, 2.0**53, 2.0**53 + 2, 1 / 3]),
       st.sampled_from(["reference", "exact"]))
def test_one_pair_of_floats_gives_the_vectorised_bits(p, n, grid):
    """``one_step_average`` (``evaluate``'s minimum AP, on Python floats) and ``one_step_averages``
    (every slice's, on arrays) give the same bits for every convention."""
    from precall._core.conventions import one_step_average, one_step_averages

    with np.errstate(all="ignore"):
        many = one_step_averages(np.array([p, 5.0]), np.array([n, 3.0]), grid)
    one = one_step_average(p, n, grid)
    assert {m: repr(float(v[0])) for m, v in many.items()} == {m: repr(v) for m, v in one.items()}


def test_worst_precision_sums_equal_the_one_pair_sums():
    """The minimum AP of all slices at once: each pair's sum as conventions._worst_precision_sum."""
    from precall._core.conventions import _worst_precision_sum, worst_precision_sums
    pairs = [(1, 0.0), (1, 3.0), (7, 2.5), (8, 1e9), (129, 7.0), (300_001, 12.0), (2**20, 3.0), (2**20 + 1, 3.0),
             (5_000_000, 1e6), (3, 1e300)]
    p = np.array([a for a, _ in pairs], dtype=float)
    n = np.array([b for _, b in pairs])
    got = worst_precision_sums(p, n)
    want = np.array([_worst_precision_sum(int(a), b) for a, b in pairs])
    assert got.view(np.int64).tolist() == want.view(np.int64).tolist()


# ---------------------------------------------------------------------------
# threshold_table(by=): each slice's table equals the table of its rows
def _same_table(a, b):
    return (a.ties == b.ties and repr((a.n_pos, a.n_neg)) == repr((b.n_pos, b.n_neg))
            and all(x.dtype == y.dtype and x.tobytes() == y.tobytes() for x, y in
                    ((a.thresholds, b.thresholds), (a.tp, b.tp), (a.fp, b.fp))))


@settings(max_examples=40, deadline=None)
@given(sliced_data(), st.sampled_from(["group", "stable"]))
def test_every_slice_table_equals_threshold_table_of_its_rows(data, ties):
    y, s, g, w = data
    try:
        sliced = precall.threshold_table(y, s, sample_weight=w, by=g, ties=ties)
    except ValueError:
        with pytest.raises(ValueError):
            precall.threshold_table(y, s, sample_weight=w, ties=ties)
        return
    assert _same_table(sliced.overall, precall.threshold_table(y, s, sample_weight=w, ties=ties))
    for name, table in sliced.items():
        mask = g == int(name)
        if w is not None and not (w[mask] > 0).any():
            assert table.thresholds.size == 0
            continue
        assert _same_table(table, precall.threshold_table(y[mask], s[mask], sample_weight=_subset(w, mask), ties=ties))
        assert sliced[name] is table


def test_sliced_tables_summary():
    rng = np.random.default_rng(9)
    g = rng.choice(["a", "b", None], 300)
    y = (rng.random(300) < 0.4).astype(int)
    s = rng.random(300)
    t = precall.threshold_table(y, s, by=g, min_support=5)
    assert t.slices == ("a", "b", MISSING)
    d = t.to_dict()
    for row in d["slices"]:
        mask = np.array([MISSING if v is None else v for v in g]) == row["slice"]
        assert row["AP step"] == precall.average_precision(y[mask], s[mask])
        assert row["ROC-AUC"] == precall.roc_auc(y[mask], s[mask])
        assert row["rows"] == len(precall.threshold_table(y[mask], s[mask]).thresholds)
    assert max(map(len, str(t).splitlines())) <= 80
    with pytest.raises(ValueError, match="`by` applies to binary input"):
        precall.threshold_table([0, 1, 2], [[.8, .1, .1], [.2, .7, .1], [.1, .2, .7]], by=[0, 0, 1])



# ---------------------------------------------------------------------------
# multi-class and multi-label by=: per slice the class averages of evaluate of the slice's rows
@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 5), st.integers(1, 5), st.sampled_from(["class", "label"]),
       st.booleans(), st.sampled_from(["group", "stable"]), st.integers(0, 2))
def test_multiclass_slices_equal_evaluate_of_their_rows(seed, k, m, kind, weighted, ties, digits):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(k, 150))
    g = rng.integers(0, m, n)
    S = np.round(rng.random((n, k)), digits)
    y = rng.integers(0, k, n) if kind == "class" else (rng.random((n, k)) < 0.4).astype(int)
    w = np.round(rng.random(n) * 2, 1) if weighted else None
    labels = list(range(k)) if kind == "class" else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = precall.evaluate(y, S, sample_weight=w, labels=labels, by=g, ties=ties, on_undefined="nan")
        except ValueError:
            with pytest.raises(ValueError):
                precall.evaluate(y, S, sample_weight=w, labels=labels, ties=ties, on_undefined="nan")
            return
        assert _same(r.overall, precall.evaluate(y, S, sample_weight=w, labels=labels, ties=ties, on_undefined="nan"))
        for name in r.slices:
            mask = g == int(name)
            if w is not None and not (w[mask] > 0).any():
                continue
            try:
                want = precall.evaluate(y[mask], S[mask], sample_weight=_subset(w, mask), labels=labels, ties=ties,
                                        on_undefined="nan")
            except ValueError:
                continue  # e.g. a multi-label slice evaluate refuses; the sliced result still reports it
            got = r[name]
            for avg in ("macro", "weighted"):
                assert _same(got["roc_auc"][avg], want.roc_auc[avg]), (name, avg)
                for meth in precall.AP_METHODS:
                    assert _same(got["average_precision"][avg][meth], want.average_precision[avg][meth]), (name, avg)
            for c in range(k):
                assert _same(r.per_class[c][name], want.per_class[c]), (name, c)
    assert max(map(len, r.to_text().splitlines())) <= 80


def test_threshold_table_of_a_slice_whose_weights_are_all_zero():
    """Such a slice keeps no row: its table is empty (no threshold, no positive, no negative), not an
    IndexError, and the other slices are each the table of their rows."""
    y = np.array([1, 0, 1, 0, 1, 0])
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4])
    w = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 1.0])
    g = np.array([0, 0, 1, 1, 2, 2])
    r = precall.threshold_table(y, s, sample_weight=w, by=g)
    empty = r["1"]
    assert len(empty.thresholds) == 0 and empty.n_pos == 0 and empty.n_neg == 0
    for name in ("0", "2"):
        mask = g == int(name)
        assert _same(r[name], precall.threshold_table(y[mask], s[mask], sample_weight=w[mask]))



@pytest.mark.parametrize("empty", [0, 1, 2])
@pytest.mark.parametrize("kernel", ["numpy", "numba"])
def test_a_slice_whose_weights_are_all_zero_has_no_positive_and_is_not_ranked(empty, kernel):
    """Such a slice keeps no row, wherever its code falls (first, inside, last: last used to raise
    IndexError, the others took the totals of the slice before): n_pos 0, undefined, not ranked, as
    the streamed route gives; every other slice is `evaluate` of its rows."""
    if kernel == "numba":
        pytest.importorskip("numba")
    y = np.array([1, 0, 1, 0, 1, 0, 0, 1])
    s = np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2])
    g = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    w = np.where(g == empty, 0.0, np.array([1.0, 2.0, 1.0, 3.0, 1.0, 1.0, 2.0, 1.0]))
    precall.set_kernel(kernel)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = precall.evaluate(y, s, sample_weight=w, by=g).to_dict()
            ap = precall.average_precision(y, s, sample_weight=w, by=g)
            streamed = precall.SlicedAccumulator().update(y, s, by=g, sample_weight=w).evaluate().to_dict()
            wants = {c: precall.evaluate(y[g == c], s[g == c], sample_weight=w[g == c]) for c in range(3) if c != empty}
    finally:
        precall.set_kernel("auto")
    rows = {row["slice"]: row for row in got["slices"]}
    assert rows[str(empty)]["n_pos"] == 0 and rows[str(empty)]["prevalence"] is None
    assert str(empty) not in got["ranked_worst_first"]
    assert ap.n_pos[list(ap.names).index(str(empty))] == 0
    assert [r["slice"] for r in streamed["slices"]] == [r["slice"] for r in got["slices"]]
    for mine, theirs in zip(got["slices"], streamed["slices"]):
        for key in ("n_pos", "prevalence", "AP step", "ROC-AUC"):
            assert _same(mine[key], theirs[key]), (mine["slice"], key)
    for c, want in wants.items():
        assert _same(rows[str(c)]["AP step"], want.average_precision["step"])
        assert _same(rows[str(c)]["ROC-AUC"], want.roc_auc)
        assert _same(rows[str(c)]["n_pos"], want.n_pos)


def test_slices_that_would_print_alike_get_distinct_names_and_keep_their_rows():
    """The integer 1 and the string "1", missing and the string "(missing)", a value "overall" (the row
    of all rows): each its own slice, with its own rows, in every result, table and frame; the streamed
    route names them alike."""
    g = np.array([1, "1", None, "(missing)", "overall", "a"] * 4, dtype=object)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, g.shape[0])
    y[:12] = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    s = rng.random(g.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = precall.evaluate(y, s, by=g)
        tables = precall.threshold_table(y, s, by=g)
        acc = precall.SlicedAccumulator()
        acc.update(y[:10], s[:10], by=g[:10])
        acc.update(y[10:], s[10:], by=g[10:])
        streamed = acc.evaluate()
    assert len(set(r.names)) == 6 and "overall" not in r.names
    assert set(r.names) == {"1", "'1'", "(missing)", "'(missing)'", "'overall'", "a"}
    assert streamed.names == r.names == tables.names
    for name, value in [("1", 1), ("'1'", "1"), ("(missing)", None), ("'(missing)'", "(missing)"),
                        ("'overall'", "overall"), ("a", "a")]:
        rows = np.array([v == value if value is not None else v is None for v in g])
        rows &= np.array([type(v) is type(value) for v in g]) if value is not None else True
        want = precall.evaluate(y[rows], s[rows])
        assert r[name].average_precision == want.average_precision, name
        assert r[name].n_samples == rows.sum()
    assert len(tables.to_csv().splitlines()) == 1 + 1 + 6
    frame = r.to_frame()
    assert frame.index.is_unique


@pytest.mark.parametrize("by", [{}, [], "frame"], ids=["dict", "list", "frame"])
def test_a_by_without_columns_is_a_value_error(by):
    y, s = np.array([0, 1, 1, 0]), np.array([0.1, 0.4, 0.35, 0.8])
    if by == "frame":
        pd = pytest.importorskip("pandas")
        by = pd.DataFrame(index=range(4))
    for f in (precall.evaluate, precall.average_precision, precall.roc_auc, precall.threshold_table):
        with pytest.raises(ValueError, match="`by`"):
            f(y, s, by=by)


@pytest.mark.parametrize("policy", ["warn", "nan", 0.25])
def test_threshold_table_by_summary_follows_the_undefined_policy_as_evaluate(policy):
    """A slice without positives / of one class: the tables' summary gives evaluate(by=)'s step AP and
    ROC-AUC under the same policy (one warning each with "warn"), in memory and streamed."""
    y = np.array([1, 0, 1, 0, 0, 0, 1, 1, 1, 0])
    s = np.linspace(0.05, 0.95, 10)
    g = np.array(list("aabbccddee"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tables = precall.threshold_table(y, s, by=g, on_undefined=policy)
    assert len(caught) == (2 if policy == "warn" else 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = precall.evaluate(y, s, by=g, on_undefined=policy)
        acc = precall.SlicedAccumulator()
        acc.update(y, s, by=g)
        streamed = acc.tables(on_undefined=policy)
    for result in (tables, streamed):
        rows = {r["slice"]: r for r in result.to_dict()["slices"]}
        for name in want.names:
            ev = want[name]
            assert rows[name]["AP step"] == _none_if_nan(ev.average_precision["step"]), name
            assert rows[name]["ROC-AUC"] == _none_if_nan(ev.roc_auc), name


def _none_if_nan(v: float):
    return None if v != v else v


def test_sliced_text_columns_line_up_with_their_headers_and_counts_print_as_counts():
    """Every printed column is as wide as its header (the multi-class table's long headers), whole
    counts print as integers whatever their value, and the titles wrap rather than being cut."""
    rng = np.random.default_rng(0)
    n = 600
    y = rng.integers(0, 3, n)
    S = rng.random((n, 3))
    g = rng.choice(["DE", "FR", "IT"], n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        texts = [str(precall.evaluate(y, S, by=g)),
                 str(precall.average_precision((y == 1).astype(int), S[:, 1], by=np.where(np.arange(n) < 3, "t", g))),
                 str(precall.stats.compare_slices((y == 1).astype(int), S[:, 1], by=g, n_resamples=50))]
    for text in texts:
        lines = text.splitlines()
        assert max(map(len, lines)) <= 80
        head = next(i for i, line in enumerate(lines) if line.startswith("slice"))
        for line in lines[head + 1:]:
            if line.strip() and not line.startswith(("...", "overall")) and line.split()[0] in ("DE", "FR", "IT", "t"):
                assert len(line) == len(lines[head]) or "[" in line, (line, lines[head])
    counts = texts[1].splitlines()
    row = next(line for line in counts if line.startswith("t "))
    assert row.split()[2] in {"0", "1", "2", "3"}  # n_pos of the 3-row slice: an integer, not 1.0000
    assert "vs the rest, worst first" in " ".join(texts[2].split())


def test_ranked_is_sorted_once_and_read_only():
    """``ranked`` (read by every output and by the command line several times) is sorted once per result."""
    rng = np.random.default_rng(4)
    g = rng.integers(0, 50, 2000)
    y = (rng.random(2000) < 0.3).astype(int)
    r = precall.evaluate(y, rng.random(2000) + y, by=g)
    first = r.ranked
    assert r.ranked is first and not first.flags.writeable
    ap = r.average_precision[r.rank_by]
    assert np.all(np.diff(ap[first]) >= 0)  # worst first


def test_pandas_extension_arrays_and_masked_arrays_as_by():
    """A pandas ExtensionArray passed as ``by`` (not in a Series) failed inside pandas (``factorize`` has no
    ``sort`` there); a numpy masked array's mask was ignored. Each gives the slices of the same values in a
    Series, the masked entries missing."""
    pd = pytest.importorskip("pandas")
    y, s = [1, 0, 1, 0, 1, 0, 1, 0], [0.9, 0.1, 0.8, 0.3, 0.5, 0.6, 0.2, 0.7]
    columns = [pd.array([1, None, 1, None, 2, 2, 1, 2], dtype="Int64"),
               pd.Categorical(["a", "b", "a", "b", None, "a", "b", "a"], categories=["b", "a", "z"]),
               pd.array(["a", None, "a", "NA", "b", "b", "a", "b"], dtype="string"),
               pd.array([True, None, False, True, False, None, True, False], dtype="boolean"),
               pd.array([1.0, None, np.nan, 1.0, 2.0, 2.0, 1.0, 2.0], dtype="Float64")]
    for column in columns:
        got, want = precall.evaluate(y, s, by=column, on_undefined="nan"), precall.evaluate(
            y, s, by=pd.Series(column), on_undefined="nan")
        assert got.slices == want.slices and "(missing)" in got.slices
        np.testing.assert_array_equal(got.n_samples, want.n_samples)
        np.testing.assert_array_equal(got.average_precision["step"], want.average_precision["step"])
    masked = np.ma.array([1, 2, 3, 1, 2, 3, 1, 2], mask=[0, 1, 0, 0, 1, 0, 0, 0])
    got = precall.evaluate(y, s, by=masked, on_undefined="nan")
    want = precall.evaluate(y, s, by=[1, None, 3, 1, None, 3, 1, 2], on_undefined="nan")
    assert got.slices == want.slices == ("1", "2", "3", "(missing)")
    np.testing.assert_array_equal(got.average_precision["step"], want.average_precision["step"])


# ---------------------------------------------------------------------------
# to_text: within 80 columns by its layout, never by cutting a line
#: names alike for their first 30 characters (at the end, only in the middle) and two-column characters
_ALIKE = ["customer_segment_enterprise_region_north", "customer_segment_enterprise_region_south",
          "customer_segment_" + "x" * 14 + "A" + "x" * 14 + "_tier",
          "customer_segment_" + "x" * 14 + "B" + "x" * 14 + "_tier",
          "\u6771\u4eac" * 10 + "\u5e97", "\u6771\u4eac" * 10 + "\u99c5", "DE"]


def _text_columns(text: str) -> int:
    """Terminal columns, independently of the code under test: two for a wide character."""
    import unicodedata

    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _rows_of(lines: list[str], name: str) -> set[str]:
    """The cells of the rows that start with ``name`` (in every block of columns)."""
    return {cell for line in lines if line.startswith(name + " ") for cell in line[len(name):].split()}


def _alike_data(n: int = 150):
    rng = np.random.default_rng(21)
    g = np.repeat(_ALIKE, n)
    y = (rng.random(g.size) < 0.4).astype(int)
    return y, np.round(rng.random(g.size) * 0.6 + 0.4 * y * rng.random(g.size), 4), g


def test_sliced_text_rounds_every_number_and_names_long_slices_apart():
    """``SlicedEvaluation.to_text`` cut every line at 80 columns (``ROC-AU``, 0.829509 as ``0.829``) and
    long names at 28 columns with ``~`` (two slices alike): every number is now whole (four decimals,
    rounded), every header whole, the lines within 80 columns by their layout, the long names
    shortened around ``...`` apart from each other with their full names in a legend; ``width=None``
    prints them whole."""
    y, s, g = _alike_data()
    r = precall.evaluate(y, s, by=g)
    text = r.to_text()
    lines = text.splitlines()
    assert max(map(_text_columns, lines)) <= 80 and "~" not in text
    headers = [line.split("  ") for line in lines if line.startswith("slice ")]
    shown = {h.strip() for parts in headers for h in parts if h.strip()}
    assert {"n", "prevalence", "AP step", "min AP step", "ROC-AUC", "best F1"} <= shown
    legend = oracles.slice_legend(lines)
    names = {name: legend.get(name, name) for name in _ALIKE}
    assert len(set(names.values())) == len(_ALIKE) and set(legend) == set(_ALIKE) - {"DE"}
    d = r.to_dict()
    for row in [d["overall"], *d["slices"]]:
        cells = _rows_of(lines, names.get(row["slice"], row["slice"]))
        want = {str(row["n"])} | {f"{row[h]:.4f}" for h in ("prevalence", "AP step", "min AP step", "ROC-AUC",
                                                             "best F1")}
        assert want <= cells, (row["slice"], want - cells)
    whole = r.to_text(width=None).splitlines()
    assert not oracles.slice_legend(whole) and all(any(line.startswith(name + " ") for line in whole) for name in _ALIKE)
    for other in (precall.average_precision(y, s, by=g), precall.roc_auc(y, s, by=g)):
        lines = other.to_text().splitlines()
        legend = oracles.slice_legend(lines)
        names = {legend.get(name, name) for name in _ALIKE}  # fewer columns: more room for the names
        assert max(map(_text_columns, lines)) <= 80 and len(names) == len(_ALIKE) and legend
        assert all(any(line.startswith(name + " ") for line in lines) for name in names)
    with pytest.raises(ValueError, match="width"):
        r.to_text(width=30)


def test_slice_comparison_text_rounds_every_number_and_names_long_slices_apart():
    """``SliceComparison.to_text`` cut names at 16 columns with ``~`` and its lines at 80 columns (the
    last p-value, ``pHolm``): every number whole, the names apart with a legend, AP's columns then
    ROC-AUC's when the table is too wide for one block; ``width=None``: one block, the names whole."""
    y, s, g = _alike_data()
    c = precall.stats.compare_slices(y, s, by=g, n_resamples=20)
    lines = c.to_text(k=5).splitlines()
    assert max(map(_text_columns, lines)) <= 80 and "~" not in "\n".join(lines)
    legend = oracles.slice_legend(lines)
    names = {name: legend.get(name, name) for name in _ALIKE}
    assert len(set(names.values())) == len(_ALIKE) and set(legend) == set(_ALIKE) - {"DE"}
    holm = lambda p: "<1e-4" if p < 1e-4 else f"{p:.4f}"  # noqa: E731
    diff = lambda d: f"{d:+.4f}".replace("-0.0000", "+0.0000")  # noqa: E731  never a negative zero
    for row in c.to_dict()["slices"]:
        cells = _rows_of(lines, names[row["slice"]])
        want = {str(row["n"]), f"{row['AP']:.4f}", f"[{row['AP low']:.4f},{row['AP high']:.4f}]",
                diff(row['AP - rest']), holm(row["AP p Holm"]), f"{row['ROC-AUC']:.4f}",
                diff(row['AUC - rest']), holm(row["AUC p Holm"])}
        assert want <= cells, (row["slice"], want - cells)
    whole = c.to_text(width=None).splitlines()
    assert not oracles.slice_legend(whole) and sum(line.startswith("slice ") for line in whole) == 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab \u6771\u0301", min_size=1, max_size=60), min_size=1, max_size=12, unique=True),
       st.integers(5, 40))
def test_shortened_names_fit_and_stay_apart(names, limit):
    """:func:`precall._core.text.shortened`: every text within ``limit`` terminal columns, the short ones
    as they are, no two distinct names alike, none like ``overall``, a shortened one never starting its
    end with a combining mark (``...`` would carry it)."""
    import unicodedata

    from precall._core.text import shortened

    out = shortened(names, limit, taken=["overall"])
    assert len(set(out)) == len(names) and "overall" not in [o for o, n in zip(out, names) if o != n]
    for name, text in zip(names, out):
        assert _text_columns(text) <= max(limit, 9)
        if _text_columns(name) <= max(limit, 9):
            assert text == name
        else:
            assert "..." in text and not unicodedata.combining(text[text.index("...") + 3:][:1] or "x")
