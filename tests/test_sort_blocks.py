"""The stable sort and the weighted sums against brute force (numpy's stable argsort, the
compensated cumsum of the whole and the exact sums), across block boundaries (a small block
size), truncated-key collisions and signed zeros; the compensated cumsum itself against exact
sums on adversarial inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oracles
from precall._core import sort as S
from precall._core.validate import check_binary

CASES = [  # (dtype, scores maker)
    (np.float64, lambda r, n: r.choice([0.0, -0.0, 1e-310, -1e-310, 1.0, 1.0 + 2**-52, 1.0 + 2**-40, 2.0], n)),
    (np.float64, lambda r, n: np.round(r.standard_normal(n), 1)),
    (np.float64, lambda r, n: r.random(n)),
    (np.float32, lambda r, n: r.choice([0.0, -0.0, 1.0, -1.5, 3.0], n)),
    (np.float16, lambda r, n: np.round(r.standard_normal(n), 1)),
    (np.int64, lambda r, n: r.integers(-5, 5, n)),
    (np.uint64, lambda r, n: r.integers(0, 4, n).astype(np.uint64) * np.uint64(2**62)),
    (np.int32, lambda r, n: r.integers(-3, 3, n)),
]


@pytest.mark.parametrize("block", [7, 64, 1 << 16])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_stable_sort_and_weighted_sums_match_brute_force(monkeypatch, block, case):
    monkeypatch.setattr(S, "_BLOCK", block)
    dtype, make = CASES[case]
    rng = np.random.default_rng(case * 31 + block)
    for n in (1, 2, 3, 50, 1000):
        scores = np.asarray(make(rng, n)).astype(dtype)
        ref = np.argsort(~scores if dtype == np.uint64 else -scores.astype(np.float64), kind="stable")
        order, s = S.stable_descending_sort(scores)
        np.testing.assert_array_equal(order, ref)
        assert s.tobytes() == scores[ref].tobytes()  # -0.0 kept as given
        y = rng.random(n) < 0.4
        w = rng.uniform(0.1, 3.0, n)
        r = S.rank(check_binary(y, scores, w))
        wo = w[ref]
        tp, fp = np.where(y[ref], wo, 0.0), np.where(y[ref], 0.0, wo)
        # the blocks carry the running sums and errors: the bits of one call on the whole
        assert r.tp.tobytes() == S.compensated_cumsum(tp).tobytes()
        assert r.fp.tobytes() == S.compensated_cumsum(fp).tobytes()
        assert oracles.ulps_from_exact(r.tp, tp).max() <= 1 and oracles.ulps_from_exact(r.fp, fp).max() <= 1


def _adversarial(kind, n, rng):
    if kind == "tenths":  # a plain cumsum of 1e5 tenths ends 1.3e4 ulps from 10000
        return np.full(n, 0.1)
    if kind == "one then crumbs":  # every crumb lost by a plain cumsum
        return np.concatenate([[1.0], np.full(n - 1, 1e-17)])
    if kind == "mixed magnitudes":  # 1e-300 .. 1e300, ascending runs then descending
        return np.concatenate([np.sort(10.0 ** rng.uniform(-300, 300, n // 2)),
                               -np.sort(-(10.0 ** rng.uniform(-30, 30, n - n // 2)))])
    return rng.uniform(0.5, 2.0, n) * rng.choice([1.0, 2.0**-30, 2.0**30], n)  # "three scales"


@pytest.mark.parametrize("kind", ["tenths", "one then crumbs", "mixed magnitudes", "three scales"])
def test_compensated_cumsum_within_an_ulp_of_exact_where_cumsum_drifts(kind):
    rng = np.random.default_rng(5)
    x = _adversarial(kind, 100_000, rng)
    assert oracles.ulps_from_exact(S.compensated_cumsum(x), x).max() <= 1
    if kind != "mixed magnitudes":  # the largest terms dominate there: a plain cumsum is fine
        assert oracles.ulps_from_exact(np.cumsum(x), x).max() > 50  # the test can tell
    carry, parts = np.zeros(2), []
    for chunk in np.array_split(x, [1, 7, 70_000]):  # blocks carrying the running sums: the same bits
        parts.append(S.compensated_cumsum(chunk, carry=carry))
    assert np.concatenate(parts).tobytes() == S.compensated_cumsum(x).tobytes()
    rows = np.stack([x[:1000], x[1000:2000]])  # 2-D: each row on its own
    assert S.compensated_cumsum(rows).tobytes() == np.stack([S.compensated_cumsum(r) for r in rows]).tobytes()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False), min_size=1,
                max_size=300), st.integers(0, 30))
def test_compensated_cumsum_is_within_an_ulp_of_the_exact_sums(values, scale):
    """Every cumulative sum within one ulp of the exact one, however many terms and magnitudes."""
    x = np.array(values) * 2.0**-scale
    assert oracles.ulps_from_exact(S.compensated_cumsum(x), x).max() <= 1


@given(st.integers(0, 12), st.sampled_from([0, 3, 40, 9_000, 70_000]), st.sampled_from([np.int64, np.float64, np.uint8]))
@settings(max_examples=60, deadline=None)
def test_scratch_arrays_are_separate(count, length, dtype):
    # the steps' and the sort's buffers (precall._core.scratch: kept between calls), each its own memory
    arrays = S.scratch_arrays(count, length, dtype)
    assert len(arrays) == count
    for i, a in enumerate(arrays):
        assert a.shape == (length,) and a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable
        a[:] = i
    for i, a in enumerate(arrays):
        assert (a == i).all()  # none written over by another
