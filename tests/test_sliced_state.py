"""The columnar state of :class:`precall.SlicedAccumulator`: its memory per slice and per (slice,
score) pair, merges in any tree and order against the in-memory ``evaluate(by=)``, weighted sums
as each slice's own :class:`precall.Accumulator` makes them, and payloads byte for byte as before."""

from __future__ import annotations

import hashlib
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import precall
from precall import SlicedAccumulator


#: with weights, sums in another order can move a recall across a grid point of voc2007 / coco
UNGRIDDED = [m for m in precall.AP_METHODS if m not in ("voc2007", "coco")]


def _same(a, b) -> bool:
    """Every number, name and the ranking, floats by their repr (bit for bit, NaN equal to NaN)."""
    return repr(a.to_dict()) == repr(b.to_dict()) and repr(a.overall) == repr(b.overall)


def test_state_memory_per_slice_at_100k_slices():
    """100,000 slices of about four rows each: the state holds each distinct (slice, score) pair in
    16 bytes and each slice's key and rows in 24, about 100 bytes a slice here, about the payload's
    size (before: one Accumulator object a slice, 1.9 KB a slice here, 19 times the payload), and
    evaluates to the in-memory numbers, bit for bit."""
    rng = np.random.default_rng(0)
    n, m = 400_000, 100_000
    y, s, g = rng.integers(0, 2, n), rng.integers(0, 100, n) / 100, rng.integers(0, m, n)
    batches = [(y[a:a + n // 2], s[a:a + n // 2], g[a:a + n // 2]) for a in (0, n // 2)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        acc = SlicedAccumulator()
        for yy, ss, gg in batches:
            acc.update(yy, ss, by=gg)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    slices = len(acc)
    assert slices > 98_000
    assert held < 150 * slices, held / slices
    state = acc._state()
    assert state.size == np.unique(g * 1000 + np.round(s * 100).astype(np.int64)).size
    assert state.key.nbytes + state.pos.nbytes + state.neg.nbytes == 16 * state.size
    assert held < 2 * len(acc.to_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _same(acc.evaluate(on_undefined="nan"), precall.evaluate(y, s, by=g, on_undefined="nan"))


def test_evaluate_memory_at_100k_slices():
    """evaluate of 100,000 slices: the pairs in the in-memory order and the steps, O(pairs) arrays
    (before: an Accumulator's steps a slice)."""
    rng = np.random.default_rng(1)
    n, m = 200_000, 100_000
    y, s, g = rng.integers(0, 2, n), rng.integers(0, 100, n) / 100, rng.integers(0, m, n)
    acc = SlicedAccumulator().update(y, s, by=g)
    acc.to_bytes()  # every run merged
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = acc.evaluate(on_undefined="nan")
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    # the result (about 25 arrays of the slices, their names and keys) and the steps
    assert peak < 1000 * len(acc), peak / len(acc)
    assert len(got.names) == len(acc)


def _batches(rng: np.random.Generator, n: int, k: int) -> list[slice]:
    cuts = np.sort(rng.integers(0, n + 1, k - 1))
    return [slice(int(a), int(b)) for a, b in zip(np.r_[0, cuts], np.r_[cuts, n])]


def _merged_in_a_random_tree(parts: list[SlicedAccumulator], rng: np.random.Generator) -> SlicedAccumulator:
    """The parts merged two at a time, each pair drawn at random and merged in a random order."""
    parts = list(parts)
    while len(parts) > 1:
        i, j = rng.choice(len(parts), 2, replace=False)
        a, b = parts[i], parts[j]
        parts = [p for t, p in enumerate(parts) if t not in (i, j)] + [a.merge(b) if rng.random() < 0.5 else b.merge(a)]
    return parts[0]


@st.composite
def _streams(draw):
    n = draw(st.integers(1, 500))
    m = draw(st.sampled_from([1, 3, 40, 300, 2000]))
    return n, m, draw(st.integers(0, 2**32 - 1)), draw(st.sampled_from([0, 1, 2, 6])), draw(st.integers(1, 9)), \
        draw(st.sampled_from(["int", "float with NaN", "strings"])), draw(st.booleans())


@settings(max_examples=60, deadline=None)
@given(_streams())
def test_merge_trees_and_orders_give_the_in_memory_bits(case):
    """Many slices, batches of float32 or float64 scores, each batch's accumulator shipped or not,
    merged in a random tree and order, twice: every number, name and key of ``precall.evaluate``
    on the concatenated rows, bit for bit, and the same pairs whatever the tree."""
    n, m, seed, digits, k, kind, ship = case
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    s = np.round(rng.random(n), digits)
    codes = rng.integers(0, m, n)
    g = {"int": codes, "float with NaN": np.where(rng.random(n) < 0.1, np.nan, codes / 4),
         "strings": np.array([f"s{c}" for c in codes])}[kind]
    pieces = _batches(rng, n, k)
    narrow = rng.random(len(pieces)) < 0.5  # float32 batches among float64 ones
    scores = [s[p].astype(np.float32) if f else s[p] for p, f in zip(pieces, narrow)]
    parts = []
    for p, sc in zip(pieces, scores):
        acc = SlicedAccumulator()
        if p.stop > p.start:
            acc.update(y[p], sc, by=g[p])
        parts.append(SlicedAccumulator.from_bytes(acc.to_bytes()) if ship and acc.columns is not None else acc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = precall.evaluate(y, np.concatenate(scores), by=g, on_undefined="nan")
        one, two = (_merged_in_a_random_tree(parts, rng) for _ in range(2))
        for got in (one, two):
            assert _same(got.evaluate(on_undefined="nan"), want)
            assert repr(got.evaluate(on_undefined="nan").keys) == repr(want.keys)
    assert _pairs(one) == _pairs(two)  # the same slices, numbered in another order


def _pairs(acc: SlicedAccumulator) -> list:
    """The state's pairs as (raw key, score, positives, negatives), sorted."""
    state, keys = acc._state(), acc._index.raw()
    return sorted(zip((repr(keys[i]) for i in state.slices().tolist()), state.scores[state.ranks()].tolist(),
                      state.pos.tolist(), state.neg.tolist()))


@settings(max_examples=30, deadline=None)
@given(_streams())
def test_weighted_merge_trees_equal_to_rounding_and_commutative(case):
    """With weights a merge adds each pair's sums once (commutative: two parts in either order give
    the same bits); trees of more parts associate the additions differently: equal to rounding,
    and to the in-memory numbers."""
    n, m, seed, digits, k, kind, ship = case
    rng = np.random.default_rng(seed)
    y, s, g = rng.integers(0, 2, n), np.round(rng.random(n), digits), rng.integers(0, m, n)
    w = np.round(rng.random(n) * 3, 2)
    w[rng.random(n) < 0.05] = 0.0
    parts = []
    for p in _batches(rng, n, k):
        acc = SlicedAccumulator()
        if p.stop > p.start:
            acc.update(y[p], s[p], by=g[p], sample_weight=w[p])
        parts.append(SlicedAccumulator.from_bytes(acc.to_bytes()) if ship and acc.columns is not None else acc)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if not w.any():
            return
        want = precall.evaluate(y, s, by=g, sample_weight=w, on_undefined="nan")
        one, two = (_merged_in_a_random_tree(parts, rng) for _ in range(2))
        got = [x.evaluate(on_undefined="nan") for x in (one, two)]
        if len(parts) >= 2:
            assert _same(parts[0].merge(parts[1]).evaluate(on_undefined="nan"),
                         parts[1].merge(parts[0]).evaluate(on_undefined="nan"))
    for r in got:
        assert r.names == want.names and r.n_samples.tolist() == want.n_samples.tolist()
        for meth in UNGRIDDED:
            np.testing.assert_allclose(r.average_precision[meth], want.average_precision[meth], rtol=1e-12,
                                       atol=1e-15)
        np.testing.assert_allclose(r.roc_auc, want.roc_auc, rtol=1e-12, atol=1e-15, equal_nan=True)
        np.testing.assert_allclose(r.n_pos, want.n_pos, rtol=1e-12)


@pytest.mark.parametrize("batches", [1, 2])
def test_weighted_sums_are_each_slices_accumulator_bit_for_bit(batches):
    """A batch's pairs carry the sums each slice's rows alone give (``score_sums``: correctly
    rounded where a score has many rows, plain where no score of the slice has more than two),
    and two batches add them once: each slice's table is its rows' ``Accumulator`` table, bit
    for bit, and so are its numbers."""
    rng = np.random.default_rng(3)
    n = 6000
    g = rng.integers(0, 60, n)
    s = np.where(g < 30, np.round(rng.random(n), 1), rng.random(n))  # many rows a score, or one or two
    y, w = rng.integers(0, 2, n), rng.random(n) * 3
    w[rng.random(n) < 0.02] = 0.0
    parts = [slice(0, n)] if batches == 1 else [slice(0, 2500), slice(2500, n)]
    acc = SlicedAccumulator()
    for p in parts:
        acc.update(y[p], s[p], by=g[p], sample_weight=w[p])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = acc.evaluate(on_undefined="nan")
    for key in acc.keys:
        one = precall.Accumulator()
        for p in parts:
            rows = g[p] == key[0]
            one.update(y[p][rows], s[p][rows], sample_weight=w[p][rows])
        a, b = acc.table(key), one.table()
        for x, z in ((a.thresholds, b.thresholds), (a.tp, b.tp), (a.fp, b.fp)):
            assert x.dtype == z.dtype and x.tobytes() == z.tobytes()
        assert repr(got[got.index(str(key[0]))].average_precision) == repr(one.evaluate().average_precision)


# sha256 of the payloads the per-slice accumulators (precall before the columnar state) wrote for
# the streams of _pinned: the format and every byte are unchanged
PINNED = {
    False: ("659ec9b7ba880f1359a34b343d3de408749221179d47d8f58fc6e6e75fa5dc6c",
            "fcf37d673315ce2fef47ac130ac04c24f0c24cbf5fc188cc4ed6baf7cff47a00",
            "744fc59e306a68c38f46c06ede1f80184bd935779b13f45cd67607f4b4ac185a"),
    True: ("252a208d520e46971f540da50aaf3131c9070b18f76f79b8c5b6ec62876d2745",
           "e2eb4ffd3195a6a3a0d03b99bcb6cb2ee0365a4fefebaaf311f3281e5df89c1e",
           "d77aaece5d75d7aefb2922764718671e83796b484fc88e7dc820b03ff341bb05"),
}


@pytest.mark.parametrize("weighted", [False, True])
def test_payloads_are_byte_for_byte_those_of_before(weighted):
    """Two columns (strings with a missing one, floats with NaN), a float64 then a float32 batch,
    with and without weights, a relabelled accumulator merging slices, and a merge: the payloads
    the per-slice state wrote, byte for byte (and so read back as before)."""
    rng = np.random.default_rng(7)
    n = 600
    y, s = rng.integers(0, 2, n), np.round(rng.random(n), 2)
    country = rng.choice(["de", "fr", "", "us"], n)
    device = rng.integers(0, 5, n).astype(float)
    device[rng.random(n) < 0.1] = np.nan
    w = np.round(rng.random(n) * 3, 1) if weighted else None
    acc = SlicedAccumulator()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for a, b in ((0, 250), (250, 600)):
            acc.update(y[a:b], s[a:b].astype(np.float32) if a else s[a:b],
                       by={"country": country[a:b], "device": device[a:b]}, sample_weight=None if w is None else w[a:b])
        one = SlicedAccumulator().update(y, s, by={"country": rng.choice(["xx", "de"], n),
                                                   "device": rng.integers(0, 300, n)})
        merged = acc.merge(one.relabel(lambda key: (key[0], float(key[1] % 7))))
    got = tuple(hashlib.sha256(x.to_bytes()).hexdigest() for x in (acc, one, merged))
    assert got == PINNED[weighted]
    back = SlicedAccumulator.from_bytes(merged.to_bytes())
    assert back.to_bytes() == merged.to_bytes() and back.keys == merged.keys


def test_counts_past_int64_are_refused_in_payloads_and_merges():
    """The overall table's rows bound every slice's: a payload counting more than 2**63 - 1 rows, or slices
    counting more rows than the overall table, is refused, and so is a merge past the limit (the counts wrapped
    round to negative numbers)."""
    import io

    def payload(pos: list[int], neg: list[int]) -> bytes:
        acc = SlicedAccumulator().update([0, 1], [0.1, 0.9], by=["a", "a"])
        with np.load(io.BytesIO(acc.to_bytes())) as npz:
            arrays = {k: npz[k] for k in npz.files}
        arrays.update(pos=np.array(pos, np.int64), neg=np.array(neg, np.int64))
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        return buffer.getvalue()

    big = SlicedAccumulator.from_bytes(payload([0, 2**61, 0, 2**61], [2**61, 0, 2**61, 0]))
    assert big.evaluate().overall.roc_auc == 1.0
    with pytest.raises(ValueError, match=r"the merge would count 9223372036854775808 rows in one table, beyond the "
                                         r"2\*\*63 - 1"):
        big.merge(big)
    with pytest.raises(ValueError, match="this batch would count"):
        SlicedAccumulator.from_bytes(payload([0, 2**62 - 1, 0, 1], [2**62, 0, 0, 0])).update([1], [0.5], by=["a"])
    with pytest.raises(ValueError, match="corrupt SlicedAccumulator payload: the overall table counts "
                                         "9223372036854775808 rows"):
        SlicedAccumulator.from_bytes(payload([0, 2**62, 0, 1], [2**62, 0, 1, 0]))
    with pytest.raises(ValueError, match="corrupt SlicedAccumulator payload: the slices count more rows"):
        SlicedAccumulator.from_bytes(payload([0, 1, 0, 2**62], [1, 0, 2**62, 0]))


def test_a_slice_table_of_several_raw_keys_and_relabel_merging_slices():
    """Raw keys of one slice (an int batch's 1 and a float batch's 1.0) and slices merged by
    relabel: their pairs added, as in memory on the renamed rows."""
    y = np.array([0, 1, 1, 0, 1, 0, 1, 1])
    s = np.array([0.1, 0.9, 0.4, 0.4, 0.2, 0.9, 0.4, 0.3])
    acc = SlicedAccumulator().update(y[:4], s[:4], by=np.array([1, 1, 2, 2])).update(
        y[4:], s[4:], by=np.array([1.0, 2.0, 1.0, 3.0]))
    want = precall.threshold_table(y, s, by=np.array([1, 1, 2, 2, 1, 2, 1, 3], dtype=float))
    assert acc.keys == [(1.0,), (2.0,), (3.0,)]
    for key, name in zip(acc.keys, ("1.0", "2.0", "3.0")):
        assert acc.table(key).tp.tolist() == want[name].tp.tolist()
        assert acc.table(key).thresholds.tolist() == want[name].thresholds.tolist()
    odd = acc.relabel(lambda key: ("odd" if key[0] % 2 else "even",))
    renamed = np.where(np.array([1, 1, 2, 2, 1, 2, 1, 3]) % 2, "odd", "even")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _same(odd.evaluate(), precall.evaluate(y, s, by=renamed))
    assert odd.tables().names == ("even", "odd")
