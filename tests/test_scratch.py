"""The blocks kept between calls (:mod:`precall._core.scratch`): an array handed out is never
memory that another live array (or a view of one) uses, a block comes back only once nothing
refers to it, a single call keeps nothing, and the bytes kept stay under the limit."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from precall._core import scratch as S

SIZES = [0, 100, 8_191, 8_192, 20_000, 131_072, 300_000]  # entries of int64: under, at and over SMALLEST


@pytest.fixture(autouse=True)
def fresh_pool():
    S.release()
    yield
    S.release()


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    return a.size > 0 and b.size > 0 and np.shares_memory(a, b)


OPS = st.lists(st.one_of(
    st.tuples(st.just("call")),
    st.tuples(st.just("take"), st.sampled_from(SIZES), st.sampled_from([np.int64, np.uint32, np.float64])),
    st.tuples(st.just("drop"), st.integers(0, 50)),
    st.tuples(st.just("view"), st.integers(0, 50)),  # keep a slice of an array, drop the array
), max_size=60)


@settings(max_examples=150, deadline=None)
@given(OPS, st.sampled_from([1 << 20, 1 << 22, S.KEPT]))
def test_live_arrays_never_share_memory(ops, kept):
    saved = S.KEPT
    S.KEPT = kept
    S.release()  # each example from an empty pool (the fixture runs once a test)
    try:
        live: list[np.ndarray] = []
        for op in ops:
            if op[0] == "call":
                S.next_call()
            elif op[0] == "take":
                a = S.empty(op[1], op[2])
                assert a.shape == (op[1],) and a.dtype == op[2] and a.flags.c_contiguous and a.flags.writeable
                for b in live:
                    assert not _overlap(a, b)
                live.append(a)
            elif live:
                a = live.pop(op[1] % len(live))
                if op[0] == "view" and a.size > 2:
                    live.append(a[1:-1])
            assert S.kept_bytes() <= S.KEPT
        for i, a in enumerate(live):  # each written, none written over
            a.view(np.uint8)[:] = i % 251
        for i, a in enumerate(live):
            assert (a.view(np.uint8) == i % 251).all()
    finally:
        S.KEPT = saved


def test_one_call_keeps_nothing_and_later_calls_reuse_their_blocks():
    def call():
        S.next_call()
        return [S.empty(n, np.int64) for n in (200_000, 200_000, 50_000)]

    first = call()
    assert S.kept_bytes() == 0  # its peak is the allocator's: nothing held back after it
    del first
    second = call()  # the sizes of an earlier call: kept
    kept = S.kept_bytes()
    assert kept >= 8 * 450_000
    addresses = sorted(a.ctypes.data for a in second)
    del second
    third = call()
    assert sorted(a.ctypes.data for a in third) == addresses and S.kept_bytes() == kept  # no new block
    held = third[0][5:10]  # a view keeps its block in use
    del third
    fourth = call()
    assert not any(_overlap(held, a) for a in fourth)
    S.release()
    assert S.kept_bytes() == 0


def test_a_block_serves_a_smaller_request_and_large_ones_are_not_kept():
    for _ in range(2):
        S.next_call()
        a = S.empty(100_000, np.int64)
    del a
    b = S.empty(90_000, np.float64)  # the free block of 100,000 entries holds it
    assert S.kept_bytes() == len(S._blocks[0]) and np.shares_memory(b, S._blocks[0])
    for _ in range(2):
        S.next_call()
        big = S.empty(S.LARGEST // 8 + 1, np.int64)
    assert not any(np.shares_memory(big, block) for block in S._blocks)
