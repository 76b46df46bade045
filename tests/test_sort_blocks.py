"""The stable sort and the weighted sums against brute force (numpy's stable argsort and cumsum),
across block boundaries (a small block size), truncated-key collisions and signed zeros."""

import numpy as np
import pytest

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
        assert r.tp.tobytes() == np.cumsum(np.where(y[ref], wo, 0.0)).tobytes()
        assert r.fp.tobytes() == np.cumsum(np.where(y[ref], 0.0, wo)).tobytes()
