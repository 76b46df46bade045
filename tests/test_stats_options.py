"""Every numeric option of :mod:`precall.stats` is checked by one validator
(``check_number`` / ``check_numbers`` / ``check_allocation``): NaN, infinities,
out-of-range values, bools, strings and None are refused with one message shape
that names the option, what it takes and what it got; the values at the edges
of each range are accepted.  And the refusal of ``resample="counts"`` says what
``max_cells`` would work."""

from __future__ import annotations

import functools
import math
import re

import numpy as np
import pytest

import precall
from precall import stats
from precall.stats import bands

rng = np.random.default_rng(0)
Y = np.r_[np.ones(12, int), np.zeros(18, int)]
A = np.round(rng.random(30) + 0.3 * Y, 2)
B = np.round(rng.random(30) + 0.2 * Y, 2)
TABLE = precall.threshold_table(Y, A)

FAST = {"n_resamples": 20, "random_state": 0}
CALLS = {
    "bootstrap_ci": lambda **kw: stats.bootstrap_ci(precall.roc_auc, Y, A, **{**FAST, **kw}),
    "bootstrap_cis": lambda **kw: stats.bootstrap_cis([precall.average_precision], Y, A, **{**FAST, **kw}),
    "bootstrap_test": lambda **kw: stats.bootstrap_test(precall.average_precision, Y, A, B, **{**FAST, **kw}),
    "bootstrap_tests": lambda **kw: stats.bootstrap_tests([precall.roc_auc], Y, A, B, **{**FAST, **kw}),
    "bootstrap_ci counts": lambda **kw: stats.bootstrap_ci(precall.roc_auc, Y, A, resample="counts",
                                                           **{**FAST, **kw}),
    "roc_auc_ci": lambda **kw: stats.roc_auc_ci(Y, A, **kw),
    "roc_auc_ci bootstrap": lambda **kw: stats.roc_auc_ci(Y, A, method="percentile", **{**FAST, **kw}),
    "roc_auc_test": lambda **kw: stats.roc_auc_test(Y, A, B, **kw),
    "roc_band": lambda **kw: bands.roc_band(TABLE, **{**FAST, **kw}),
    "pr_band": lambda **kw: bands.pr_band(TABLE, **{**FAST, **kw}),
}
BOOTSTRAPS = ["bootstrap_ci", "bootstrap_cis", "bootstrap_test", "bootstrap_tests", "bootstrap_ci counts",
              "roc_auc_ci bootstrap"]
BANDS = ["roc_band", "pr_band"]

# the classes of bad value: (value, the error type)
NOT_A_NUMBER = [(True, TypeError), (False, TypeError), ("0.95", TypeError), (None, TypeError), ([0.9], TypeError),
                (math.nan, ValueError), (math.inf, ValueError), (-math.inf, ValueError)]
# option -> (the calls that take it, the values out of range or not whole, values at the edges that are accepted)
OPTIONS = {
    "level": (BOOTSTRAPS + BANDS + ["roc_auc_ci", "roc_auc_test"],
              [0, 1, 0.0, 1.0, -0.5, 1.5, 95],
              [1e-9, 0.5, 1 - 1e-12, np.float32(0.9), np.float64(0.99)]),
    "n_resamples": (BOOTSTRAPS + BANDS, [0, -3, 2.5, 10**13], [2, np.int64(3), 4.0]),
    "max_cells": (BOOTSTRAPS[:5], [255, 0, -1, 1000.5, 2**15 + 0.25], [256, np.int32(4096), 5000.0]),
    "blocks": (BANDS, [0, -1, 2.5], [1, np.int64(16), 64.0]),
}
BAD = [(call, option, value, kind)
       for option, (calls, out_of_range, _) in OPTIONS.items()
       for call in calls
       for value, kind in [*NOT_A_NUMBER, *((v, ValueError) for v in out_of_range)]
       if not (option == "n_resamples" and call in BANDS and value == 0.0)]
GOOD = [(call, option, value) for option, (calls, _, edges) in OPTIONS.items() for call in calls for value in edges]


@pytest.mark.parametrize(("call", "option", "value", "kind"), BAD,
                         ids=[f"{c}-{o}-{v!r}" for c, o, v, _ in BAD])
def test_bad_numeric_options_are_refused_naming_the_option(call, option, value, kind):
    with pytest.raises(kind) as err:
        CALLS[call](**{option: value})
    message = str(err.value)
    assert "\n" not in message, message
    if value == 10**13:  # the allocation it would make, before making it
        assert re.match(f"`{option}` = {value} would allocate .* [TP]iB \\(limit 8.0 GiB\\); draw fewer resamples$",
                        message), message
        return
    assert message.startswith(f"`{option}` must be") and "; got " in message, message
    if option == "level":  # the same open interval for 0 and for 1
        assert "(0, 1)" in message, message


@pytest.mark.parametrize(("call", "option", "value"), GOOD, ids=[f"{c}-{o}-{v!r}" for c, o, v in GOOD])
def test_values_at_the_edges_are_accepted(call, option, value):
    if option == "n_resamples" and call in BOOTSTRAPS and value == 2:
        value = 3  # two resamples: BCa-free, but a percentile interval of 2 values is still defined
    CALLS[call](**{option: value})


@pytest.mark.parametrize("call", BOOTSTRAPS + BANDS)
@pytest.mark.parametrize(("seed", "kind"), [(-1, ValueError), (1.5, ValueError), (math.nan, ValueError),
                                            (True, TypeError), ("seed", TypeError), ([1, -2], ValueError),
                                            ([1, 2.5], ValueError), (object(), TypeError)])
def test_bad_random_state_is_refused_naming_it(call, seed, kind):
    with pytest.raises(kind, match=r"^`random_state` must be .*; got "):
        CALLS[call](random_state=seed)


@pytest.mark.parametrize("call", BOOTSTRAPS + BANDS)
def test_seeds_numpy_takes_give_the_same_draws(call):
    """A whole float, a numpy integer and a SeedSequence of the same seed draw what the int does."""
    def key(result):
        return (result.low, result.high) if hasattr(result, "low") and np.ndim(result.low) == 0 else \
            tuple(np.r_[result.low, result.high]) if hasattr(result, "low") else tuple(
                np.r_[[(r.low, r.high) for r in result]].ravel())
    want = key(CALLS[call](random_state=7))
    for seed in (7.0, np.int64(7), np.random.SeedSequence(7)):
        assert np.array_equal(key(CALLS[call](random_state=seed)), want, equal_nan=True)
    CALLS[call](random_state=np.random.default_rng(7))
    CALLS[call](random_state=[7, 8])


# ---------------------------------------------------------------- resample="counts" refused
def _continuous(n, seed=0):
    r = np.random.default_rng(seed)
    y = (r.random(n) < 0.4).astype(int)
    return y, r.random(n) + y, r.random(n) + y


@pytest.mark.parametrize(("n", "paired"), [(20000, True), (6000, True)])
def test_counts_refusal_says_which_max_cells_works(n, paired):
    y, a, b = _continuous(n)
    run = (functools.partial(stats.bootstrap_test, precall.roc_auc, y, a, b) if paired
           else functools.partial(stats.bootstrap_ci, precall.roc_auc, y, a))
    with pytest.raises(ValueError) as err:
        run(n_resamples=5, resample="counts", max_cells=256, random_state=0)
    message = str(err.value)
    assert message.startswith("`max_cells` must be at least ") and "got 256" in message, message
    assert "resample='rows'" in message
    needed = int(re.search(r"at least (\d+)", message).group(1))
    assert needed > 256
    with pytest.raises(ValueError, match=f"at least {needed} "):
        run(n_resamples=5, resample="counts", max_cells=needed - 1, random_state=0)
    result = run(n_resamples=5, resample="counts", max_cells=needed, random_state=0)  # the advice works
    assert result.n_blocks is not None
