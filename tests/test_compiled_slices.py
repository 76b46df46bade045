"""The compiled passes of ``by=`` and of ragged batches (numba, the ``fast`` extra) give the
bits of their numpy twins.

The numpy routes are the oracles: ``tests/test_slices.py`` holds them equal to the
functions on each slice's rows; here every compiled pass is held equal to its twin on
the same inputs, with the kernel forced both ways (``set_kernel``).  CI installs numba
(the ``test`` extra), so these run there; without numba they skip.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import precall
from precall import slices
from precall._core import backend
from precall._core.steps import segment_sums

from test_slices import SCORE_KINDS, _scores

numba = pytest.importorskip("numba")


def _both(f):
    """``f()`` with the numpy route, then with the compiled one (the choice restored after)."""
    out = []
    previous = backend.get_kernel()
    try:
        for kernel in ("numpy", "numba"):
            backend.set_kernel(kernel)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(f())
    finally:
        backend.set_kernel(previous)
    return out


@st.composite
def unweighted_slices(draw):
    n = draw(st.integers(1, 150))
    m = draw(st.sampled_from([1, 2, 3, 8, 40]))
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    g = rng.integers(0, m, n)
    prev = rng.random(m)[g] * draw(st.sampled_from([0.0, 0.3, 1.0]))
    y = (rng.random(n) < prev).astype(int)
    s = _scores(rng, n, draw(st.integers(0, 3)), draw(st.sampled_from(SCORE_KINDS)))
    return y, s, g


@settings(max_examples=80, deadline=None)
@given(unweighted_slices(), st.sampled_from(["group", "stable"]), st.sampled_from(["reference", "exact"]))
def test_sliced_evaluate_equals_the_numpy_route(data, ties, grid):
    y, s, g = data
    a, b = _both(lambda: precall.evaluate(y, s, by=g, ties=ties, recall_grid=grid, on_undefined="nan"))
    assert repr(a.to_dict()) == repr(b.to_dict())
    assert repr(a.overall) == repr(b.overall)
    for name in a.slices:
        assert repr(a[name]) == repr(b[name])


@settings(max_examples=40, deadline=None)
@given(unweighted_slices(), st.sampled_from(list(precall.AP_METHODS) + ["roc"]), st.sampled_from(["group", "stable"]))
def test_sliced_metrics_equal_the_numpy_route(data, which, ties):
    y, s, g = data
    if which == "roc":
        a, b = _both(lambda: precall.roc_auc(y, s, by=g, pos_label=1, on_undefined="nan"))
    else:
        a, b = _both(lambda: precall.average_precision(y, s, by=g, method=which, ties=ties, on_undefined="nan"))
    assert repr(a.to_dict()) == repr(b.to_dict())


@pytest.mark.parametrize("ties", ["group", "stable"])
def test_signed_zero_and_wide_scores_and_many_slices(ties):
    rng = np.random.default_rng(3)
    n = 5000
    g = rng.integers(0, 3000, n)  # 12 slice bits
    y = (rng.random(n) < 0.3).astype(int)
    for s in (np.where(rng.random(n) < 0.5, -0.0, 0.0), rng.standard_normal(n) * 1e300,
              rng.integers(0, 2**62, n), rng.integers(0, 4, n).astype(np.float32)):
        a, b = _both(lambda: precall.evaluate(y, s, by=g, ties=ties, on_undefined="nan"))
        assert repr(a.to_dict()) == repr(b.to_dict()) and repr(a.overall) == repr(b.overall)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 700), min_size=1, max_size=12), st.integers(0, 2**31),
       st.sampled_from([1.0, 1e-12, 1e16]))
def test_segment_sums_equal_numpy_sums(lengths, seed, scale):
    rng = np.random.default_rng(seed)
    total = int(sum(lengths))
    x = rng.standard_normal(total) * scale * rng.choice([1.0, 1e-8, 1e8], size=total)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    want = np.array([np.sum(x[s:s + n]) for s, n in zip(starts, lengths)])
    a, b = _both(lambda: segment_sums(x, starts, lengths))
    assert a.view(np.int64).tolist() == want.view(np.int64).tolist() == b.view(np.int64).tolist()


def test_long_segments():
    rng = np.random.default_rng(9)
    lengths = [300_001, 2**17 + 5, 8, 0, 129]
    x = rng.standard_normal(int(sum(lengths))) * 1e8
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    want = np.array([np.sum(x[s:s + n]) for s, n in zip(starts, lengths)])
    a, b = _both(lambda: segment_sums(x, starts, lengths))
    assert a.tobytes() == want.tobytes() == b.tobytes()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 3000), st.integers(1, 64), st.sampled_from(["none", "int16", "int32", "int64"]),
       st.integers(0, 2**31))
def test_radix_sort_equals_numpy_sort(n, bits, payload, seed):
    """Keys alone as np.sort of the keys read unsigned; keys carrying a payload as the stable
    argsort (equal keys keep their order), with runs of equal keys and passes that move nothing."""
    from precall._core import compiled

    rng = np.random.default_rng(seed)
    key = rng.integers(0, 2**bits, n, dtype=np.uint64)
    key[: n // 3] = key[0] if n else 0  # ties
    if n and seed % 3 == 0:
        key &= np.uint64(~(2047 << 11) & (2**64 - 1))  # a digit that is one value for every key
    key = key.view(np.int64)
    if payload == "none":
        want = np.sort(key.view(np.uint64)).view(np.int64)
        compiled.radix_sort(key, np.empty_like(key))
        assert key.tobytes() == want.tobytes()
        return
    carried = rng.integers(0, 2**15, n).astype(payload)
    order = np.argsort(key.view(np.uint64), kind="stable")
    want_key, want_payload = key[order], carried[order]
    compiled.radix_sort_carry(key, carried, np.empty_like(key), np.empty_like(carried))
    assert key.tobytes() == want_key.tobytes()
    assert carried.tobytes() == want_payload.tobytes()


@pytest.mark.parametrize("kind", ["uniform64", "floats", "ties", "narrow", "equal", "two"])
def test_radix_sort_carry_large(kind):
    """Above the in-cache size the rows are scattered by their most significant differing digit
    (twice for the largest buckets) before each bucket is sorted: still the stable argsort."""
    from precall._core import compiled

    n = 700_000
    rng = np.random.default_rng(len(kind))
    s = rng.random(n)
    key = {"uniform64": lambda: rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64),
           "floats": lambda: s.view(np.int64).copy(),
           "ties": lambda: np.round(s, 2).view(np.int64).copy(),
           "narrow": lambda: (0.5 + s * 1e-12).view(np.int64).copy(),
           "equal": lambda: np.full(n, 12345, dtype=np.int64),
           "two": lambda: np.where(s < 0.9, -1, 7).astype(np.int64)}[kind]()
    for payload in (np.arange(n, dtype=np.int64), rng.integers(0, 2**15, n).astype(np.int16)):
        order = np.argsort(key.view(np.uint64), kind="stable")
        k, p = key.copy(), payload.copy()
        compiled.radix_sort_carry(k, p, np.empty_like(k), np.empty_like(p))
        assert k.tobytes() == key[order].tobytes()
        assert p.tobytes() == payload[order].tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_key_scores_equal_the_numpy_passes(dtype):
    """Scores read back from their descending keys in one compiled pass: the numpy passes' bits
    (negative, infinite, subnormal and zero scores; -0.0 comes back as +0.0 either way)."""
    from precall._core import compiled
    from precall._core.sort import _descending_key, descending_key_scores

    rng = np.random.default_rng(3)
    x = np.concatenate([rng.standard_normal(5000), [0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 1e-45, -1e-45]])
    x = x.astype(dtype)
    key = _descending_key(x)[0]
    want = descending_key_scores(key, np.dtype(dtype))
    got = descending_key_scores(key, np.dtype(dtype), compiled)
    assert got.dtype == want.dtype == dtype
    assert got.tobytes() == want.tobytes()
    assert np.array_equal(got, x)


def _tagged_sorted(x: np.ndarray, y: np.ndarray) -> tuple[int, np.ndarray | None]:
    """The oracle of ``tag_sort_floats``: each score's key ``|bits| << 1 | label`` (non-negative
    scores first), each part by ``np.sort``; None for a -0.0."""
    wide = x.dtype.itemsize == 8
    bits = x.view(np.int64 if wide else np.int32).astype(np.int64)
    if np.any(bits == np.int64(-(2**63) if wide else -(2**31))):
        return 0, None
    negative = bits < 0
    mag = bits & np.int64(2**63 - 1 if wide else 2**31 - 1)
    key = ((mag.view(np.uint64) << np.uint64(1)) | y.astype(np.uint64)).astype(np.uint64 if wide else np.uint32)
    return int((~negative).sum()), np.concatenate([np.sort(key[~negative]), np.sort(key[negative])])


@pytest.mark.parametrize("n", [0, 1, 2, 40, 3000, 700_000])
@pytest.mark.parametrize("kind", ["normal", "ties", "equal", "negative", "tiny", "infinite", "narrow", "cluster"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tag_sort_floats_equals_numpy_sort(n, kind, dtype):
    """Tagged and sorted in one pass structure (no unsorted keys, no buffer of their size): the
    keys of each part as np.sort gives them, above the in-cache size too (a bucket of more than
    2**18 rows: ``cluster``, sorted by flag passes in place)."""
    from precall._core import compiled

    rng = np.random.default_rng(n + len(kind))
    u = rng.random(n)
    x = {"normal": lambda: rng.standard_normal(n), "ties": lambda: np.round(rng.standard_normal(n), 1) + 0.0,  # + 0.0: no -0.0
         "equal": lambda: np.full(n, 0.25), "negative": lambda: -u, "tiny": lambda: u * 1e-300,
         "infinite": lambda: np.where(u < 0.1, np.inf, np.where(u > 0.9, -np.inf, u - 0.5)),
         "narrow": lambda: 0.5 + u * 1e-9,
         "cluster": lambda: np.where(u < 0.6, 0.5 + u * 1e-6, u)}[kind]().astype(dtype)
    y = (rng.random(n) < 0.3).astype(np.uint8)
    want_k, want = _tagged_sorted(x, y)
    key = np.empty(n, dtype=np.uint64 if dtype == np.float64 else np.uint32)
    if dtype == np.float64:
        k, ok = compiled.tag_sort_floats(x.view(np.int64), y, key.view(np.int64), np.int64(2**63 - 1))
    else:
        k, ok = compiled.tag_sort_floats(x.view(np.int32), y, key, np.int32(2**31 - 1))
    assert ok and k == want_k
    assert key.tobytes() == want.tobytes()
    # in place: the keys written over the scores' own bits, the labels (a copy) permuted with them
    wide = dtype == np.float64
    signed, mask = (np.int64, np.int64(2**63 - 1)) if wide else (np.int32, np.int32(2**31 - 1))
    own, label = x.copy(), y.copy()
    k, ok = compiled.tag_sort_floats_in_place(own.view(signed), own.view(np.int64 if wide else np.uint32), label,
                                              mask)
    assert ok and k == want_k
    assert own.tobytes() == want.tobytes()
    if n:  # a -0.0 anywhere: refused (the caller takes the numpy route), the scores untouched
        x[n // 2] = -0.0
        assert _tagged_sorted(x, y)[1] is None
        assert not compiled.tag_sort_floats(x.view(signed), y, key.view(np.int64) if wide else key, mask)[1]
        own = x.copy()
        assert not compiled.tag_sort_floats_in_place(own.view(signed), own.view(np.int64 if wide else np.uint32),
                                                     y.copy(), mask)[1]
        assert own.tobytes() == x.tobytes()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3000), st.sampled_from([1, 2, 5, 40, 1000, 10**6]), st.integers(1, 300), st.integers(0, 2**31))
def test_score_runs_pass_equals_score_major_pass(n, distinct, m, seed):
    """Rows sorted by score alone, the slices of one score in any order, give the steps of the
    rows sorted by score, slice and class; records of int32 give the values of records of int64."""
    from precall._core import compiled

    rng = np.random.default_rng(seed)
    score = rng.integers(0, distinct, n) * (2**32 // distinct)  # keys up to 32 bits
    codes = rng.integers(0, m, n)
    negative = rng.random(n) < 0.6
    low = (codes << 1) | negative
    by_all = np.lexsort((low, score))
    by_score = np.argsort(score, kind="stable")

    def room(dtype):
        cap = np.zeros(m, dtype=np.int64)
        compiled.slice_positives(codes, negative, cap)
        assert np.array_equal(cap, np.bincount(codes[~negative], minlength=m))
        k = int(cap.sum())
        return cap, np.empty((5, k), dtype=np.int64), np.empty((k, 4), dtype=dtype), np.empty(k, dtype=np.int64)

    want = [a.copy() if isinstance(a, np.ndarray) else a
            for a in compiled.score_major_pass(score[by_all], low[by_all], 0, 63, *room(np.int64))]
    narrow = [a.copy() if isinstance(a, np.ndarray) else a
              for a in compiled.score_major_pass(score[by_all], low[by_all], 0, 63, *room(np.int32))]
    narrow[1] = narrow[1].astype(np.int64)
    narrow[1][:, 0] &= 2**32 - 1  # the score keys, stored as the low 32 bits
    got = compiled.score_runs_pass(score[by_score], low[by_score].astype(np.int32), *room(np.int64))
    per_slice, records, dtp = want[:3]
    assert int(per_slice.sum()) == records.shape[0] == dtp.shape[0]
    first = np.concatenate([[0], np.cumsum(per_slice)[:-1]])[per_slice > 0]
    before = np.concatenate([[0], records[:-1, 1]])
    before[first] = 0
    assert np.array_equal(dtp, records[:, 1] - before)  # a step's positives: its TP less the slice's step before
    for a, b, c in zip(want, got, narrow):
        assert np.array_equal(a, b)
        assert np.array_equal(a, c)
    # the two parts a pass makes in two threads: all rows' steps (part 1), the slices' (part 2)
    for one_pass, args in ((compiled.score_major_pass, (score[by_all], low[by_all], 0, 63)),
                           (compiled.score_runs_pass, (score[by_score], low[by_score].astype(np.int32)))):
        whole = one_pass(*args, *room(np.int64), 1)
        sliced = one_pass(*args, *room(np.int64), 2)
        assert sliced[1].shape[0] == want[1].shape[0] and whole[1].shape[0] == 0  # each part alone
        assert whole[4].shape[0] == want[4].shape[0] and sliced[4].shape[0] == 0
        for k, a in enumerate(want):
            assert np.array_equal(a, (whole if 4 <= k < 10 else sliced)[k])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2000), st.integers(1, 50), st.integers(0, 2**31))
def test_key_passes_equal_their_numpy_twins(n, m, seed):
    """The compiled key passes of ``by=`` give ``_descending_key``'s keys (float64 and float32,
    negative scores, zeros, infinities and subnormals among them); each slice's positives are
    counted as ``np.bincount`` counts them."""
    from precall._core import compiled
    from precall._core.sort import _descending_key

    rng = np.random.default_rng(seed)
    pool = np.array([0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324, 1.0, -1.0, 0.5])
    x = np.where(rng.random(n) < 0.3, rng.choice(pool, n), rng.normal(size=n) * 10.0 ** rng.integers(-300, 300, n))
    own = np.empty(n, dtype=np.int64)
    compiled.float64_keys(x.view(np.int64), own)
    assert np.array_equal(own.view(np.uint64), _descending_key(x)[0])
    codes = rng.integers(0, m, n)
    negative = rng.random(n) < 0.5
    bits = max(0, (m - 1).bit_length())
    x32 = x.astype(np.float32)
    keys, cap = np.empty(n, dtype=np.int64), np.zeros(m, dtype=np.int64)
    compiled.float32_keys(x32.view(np.int32), codes, negative, bits, keys)
    want = (_descending_key(x32)[0].astype(np.int64) << (bits + 1)) | (codes << 1) | negative
    assert np.array_equal(keys, want)
    score_key = _descending_key(x32)[0].astype(np.int64)
    compiled.assemble_keys(score_key, codes, negative, bits)
    assert np.array_equal(score_key, want)
    compiled.slice_positives(codes, negative, cap)
    assert np.array_equal(cap, np.bincount(codes[~negative], minlength=m))


@pytest.mark.parametrize("kernel", ["numpy", "numba"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_two_threads_give_the_bits_of_one(monkeypatch, kernel, dtype):
    """``by=`` makes all rows' steps and numbers in a second thread beside the slices' (and shares
    the slices' batches out between both) from ``backend.MIN_BESIDE`` rows: the same bits as in
    one thread (``PRECALL_THREADS=1``).  The threshold is lowered so that small inputs take it."""
    rng = np.random.default_rng(11)
    n = 20_000
    g = np.stack([rng.integers(0, 300, n), rng.integers(0, 3, n)])
    y = (rng.random(n) < rng.random(300)[g[0]]).astype(int)
    s = np.round(rng.random(n), 3).astype(dtype)  # ties within and across slices
    w = rng.integers(0, 3, n).astype(float)

    def run():
        previous = backend.get_kernel()
        backend.set_kernel(kernel)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return [repr(precall.evaluate(y, s, by=list(g), ties=t, on_undefined="nan").to_dict())
                        for t in ("group", "stable")] + [
                    repr(precall.evaluate(y, s, by=list(g), sample_weight=w, on_undefined="nan").to_dict()),
                    repr(precall.average_precision(y, s, by=list(g), on_undefined="nan").to_dict())]
        finally:
            backend.set_kernel(previous)

    monkeypatch.setenv("PRECALL_THREADS", "1")
    one = run()
    monkeypatch.delenv("PRECALL_THREADS")
    monkeypatch.setattr(backend, "MIN_BESIDE", 0)
    monkeypatch.setattr(backend, "_cores", lambda: 2)
    calls = []
    beside = backend.beside
    monkeypatch.setattr(backend, "beside", lambda *a: calls.append(a[0]) or beside(*a))
    routes = []
    for name in ("_slice_major", "_slice_major_numpy"):  # the routes that evaluate all rows beside the slices
        route = getattr(slices, name)
        monkeypatch.setattr(slices, name, lambda *a, name=name, route=route: routes.append(name) or route(*a))
    assert run() == one
    assert calls  # the second thread was used
    if kernel == "numba":
        assert "_slice_major" in routes
    elif dtype == np.float32:  # (these float64 scores are not float32 values: their dense ranks, one thread)
        assert "_slice_major_numpy" in routes


@pytest.mark.parametrize("signs", ["both", "non-negative", "non-positive"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_slice_major_route_equals_the_one_sort(monkeypatch, dtype, signs):
    """With two threads the slices are sorted each on its own (``slices._slice_major``), all rows
    by evaluate's own sort in the other thread: the bits of the one sort by score, slice and class
    (``PRECALL_THREADS=1``), with scores of both signs or one, a slice beyond ``IN_CACHE`` rows (sorted through a buffer),
    negative scores, the largest floats, ties within and across slices, empty and one-class slices."""
    pytest.importorskip("numba")
    from precall._core import compiled

    rng = np.random.default_rng(3)
    n = compiled.IN_CACHE + 40_000
    g = np.where(rng.random(n) < 0.9, 0, rng.integers(1, 60, n))  # slice 0 beyond IN_CACHE rows
    g[g == 7] = 8  # slice codes with a gap (an empty code is no slice)
    y = (rng.random(n) < 0.3).astype(int)
    y[g == 5] = 0  # a slice without positives
    s = (np.round(rng.standard_normal(n) * 3, 2) + 0.0).astype(dtype)  # negative scores, ties (no -0.0)
    s[:50] = np.finfo(dtype).max
    s[50:90] = -np.finfo(dtype).max
    if signs != "both":  # float64 keys then drop their sign bit for the class (slice_major_keys)
        s = np.abs(s) if signs == "non-negative" else -np.abs(s) - dtype(0.5)  # no zero: +0.0 has a sign bit

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [repr(precall.evaluate(y, s, by=g, ties=t, on_undefined="nan").to_dict()) for t in ("group", "stable")]

    previous = backend.get_kernel()
    backend.set_kernel("numba")
    try:
        monkeypatch.setenv("PRECALL_THREADS", "1")
        one = run()
        monkeypatch.delenv("PRECALL_THREADS")
        monkeypatch.setattr(backend, "_cores", lambda: 2)
        calls = []
        major = slices._slice_major
        monkeypatch.setattr(slices, "_slice_major", lambda *a: calls.append(1) or major(*a))
        assert run() == one
        assert calls  # the slice-major route ran
    finally:
        backend.set_kernel(previous)


def test_second_thread_after_fork(monkeypatch):
    """A process forked after ``by=`` used the second thread (e.g. a multiprocessing worker) gets
    its own thread: the parent's is not in the child, and a task given to it would never run."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    monkeypatch.setattr(backend, "MIN_BESIDE", 0)
    monkeypatch.setattr(backend, "_cores", lambda: 2)
    rng = np.random.default_rng(5)
    n = 3000
    g, y, s = rng.integers(0, 20, n), (rng.random(n) < 0.3).astype(int), rng.random(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = repr(precall.evaluate(y, s, by=g).to_dict())
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()

    def child():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            queue.put(repr(precall.evaluate(y, s, by=g).to_dict()))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads: what this test is about
        process = ctx.Process(target=child)
        process.start()
    try:
        got = queue.get(timeout=120)
    finally:
        process.join(5)
        if process.is_alive():
            process.kill()
    assert got == want
