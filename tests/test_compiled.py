"""The compiled pass (numba, the ``fast`` extra) against the numpy route, its oracle: the same bits.

Every field of the steps (dtype and bytes), every number of ``evaluate`` (each AP
convention, ROC-AUC, AUPRG, best F1) and the single metrics, on random input with
ties, signed zeros, extremes, weights, 8 dtypes, tiny inputs and inputs crossing the
compiled pass's blocks; and the kernel choice itself (explicit, reported, validated).
"""

from __future__ import annotations

import dataclasses
import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import precall
from precall._core import backend
from precall._core.steps import Steps, steps_and_grouped, steps_of
from precall._core.validate import check_binary

pytest.importorskip("numba")

DTYPES = [np.float64, np.float32, np.float16, np.int8, np.int32, np.uint16, np.int64, np.uint64]


@pytest.fixture(autouse=True)
def _restore_kernel():
    previous = backend.set_kernel("auto")
    yield
    backend.set_kernel(previous)


def _bits(value):
    """A value as comparable bits: arrays by dtype and bytes, floats by their repr (sign of zero, NaN)."""
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (float, np.floating)):
        return ("float", repr(float(value)), math.copysign(1.0, float(value)))
    if dataclasses.is_dataclass(value):
        return tuple((f.name, _bits(getattr(value, f.name))) for f in dataclasses.fields(value))
    if isinstance(value, dict):
        return tuple(sorted((k, _bits(v)) for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return tuple(_bits(v) for v in value)
    return value


def _both(func):
    backend.set_kernel("numpy")
    a = func()
    assert backend.last_kernel() == "numpy"
    backend.set_kernel("numba")
    b = func()
    return a, b


def _scores(values, dtype):
    if np.dtype(dtype).kind == "f":
        info = np.finfo(dtype)
        pool = np.array([0.0, -0.0, 1.0, -1.0, 0.5, float(info.max), -float(info.max), float(info.tiny),
                         -float(info.tiny), float(info.smallest_subnormal), 2.0 ** -30, 1.0 + float(info.eps)])
        return pool.astype(dtype)[np.asarray(values) % pool.size] if values else np.zeros(0, dtype)
    info = np.iinfo(dtype)
    pool = [0, 1, 2, 7, int(info.max), int(info.min), int(info.max) - 1, int(info.min) + 1, -1, -7]
    pool = [v for v in pool if info.min <= v <= info.max]
    return np.array([pool[v % len(pool)] for v in values], dtype=object).astype(dtype)


inputs = st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.sampled_from(DTYPES),
    st.lists(st.integers(0, 200), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n),
    st.one_of(st.none(), st.lists(st.sampled_from([0.0, 0.1, 0.5, 1.0, 3.0, 1e-300, 1e300]), min_size=n,
                                                  max_size=n)),
))


@settings(max_examples=300, deadline=None)
@given(inputs)
def test_steps_are_the_same_bits(case):
    dtype, values, labels, weight = case
    scores = _scores(values, dtype)
    if weight is not None and not any(w > 0 for w in weight):
        weight = None
    data = check_binary(np.array(labels, dtype=int), scores, weight, pos_label=1)
    for ties in ("group", "stable"):
        a, b = _both(lambda: steps_of(data, ties))
        assert _bits(a) == _bits(b), ties
        a, b = _both(lambda: steps_and_grouped(data, ties))
        assert _bits(a) == _bits(b), ties
        assert (a[0] is a[1]) == (b[0] is b[1])


@pytest.mark.filterwarnings("ignore")  # extreme weights overflow some convention terms, in both kernels alike
@settings(max_examples=60, deadline=None)
@given(inputs, st.sampled_from(["group", "stable"]))
def test_every_number_is_the_same(case, ties):
    dtype, values, labels, weight = case
    scores = _scores(values, dtype)
    if weight is not None and not any(w > 0 for w in weight):
        weight = None
    y = np.array(labels, dtype=int)
    if y.min() == y.max():  # both classes, so that every number is defined
        y[0] = 1 - y[0]
    a, b = _both(lambda: precall.evaluate(y, scores, sample_weight=weight, pos_label=1, ties=ties,
                                          on_undefined="nan"))
    assert _bits(a) == _bits(b)
    for f in (lambda: precall.roc_auc(y, scores, sample_weight=weight),
              lambda: precall.average_precision(y, scores, sample_weight=weight, pos_label=1, ties=ties)):
        a, b = _both(f)
        assert _bits(a) == _bits(b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("prevalence", [0.01, 0.5])
@pytest.mark.parametrize("n, signed_zero", [(30_000, False), (30_000, True), (400_000, False)])
def test_large_inputs_across_blocks_and_key_collisions(dtype, weighted, prevalence, n, signed_zero):
    """30000 samples (the index keys' pass works in blocks of 4096; its 64-bit keys keep only
    the top 49 bits of a float64 score there, so scores 2**-52 apart share a key: the route of
    weights and stable ties when a -0.0 is among the scores) and 400000 (the exact score keys'
    sort scatters them by their top digit first, above 2**18 rows)."""
    rng = np.random.default_rng(7)
    base = rng.choice([0.25, 0.5, 0.75, -0.5, 3.0], n)
    scores = (base + rng.integers(0, 6, n) * np.finfo(np.float64).eps).astype(dtype)
    scores[rng.random(n) < 0.3] = rng.random(int(np.sum(rng.random(n) < 0.3)) or 1)[0]
    if n > 100_000:  # half the rows continuous: buckets of many distinct keys at every digit
        scores = np.where(rng.random(n) < 0.5, rng.standard_normal(n).astype(dtype), scores)
    if signed_zero:
        scores[::7] = -0.0
    y = rng.random(n) < prevalence
    weight = rng.uniform(0.1, 4.0, n) if weighted else None
    data = check_binary(y, scores, weight)
    for ties in ("group", "stable"):
        a, b = _both(lambda: steps_and_grouped(data, ties))
        assert _bits(a) == _bits(b)
    for ties in ("group", "stable"):
        a, b = _both(lambda: precall.evaluate(y, scores, sample_weight=weight, ties=ties))
        assert _bits(a) == _bits(b)


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.float16,
                                   np.float32])
def test_stable_ties_of_narrow_scores_take_the_exact_keys(dtype):
    """Stable ties of scores of at most 32 bits from ``steps.SHARED_LIKELY`` rows go straight to the exact keys
    (integers and float16 included): the numbers of the numpy route."""
    from precall._core import steps

    rng = np.random.default_rng(5)
    n = steps.SHARED_LIKELY + 3000
    y = rng.random(n) < 0.3
    kind = np.dtype(dtype).kind
    info = np.iinfo(dtype) if kind in "iu" else None
    s = (rng.integers(info.min, info.max, n, endpoint=True) if info else rng.standard_normal(n)).astype(dtype)
    for f in (lambda: precall.evaluate(y, s, ties="stable"), lambda: precall.average_precision(y, s, ties="stable")):
        with mock.patch.object(steps, "tagged_keys", side_effect=AssertionError("the label-tagged sort ran")):
            a, b = _both(f)
        assert _bits(a) == _bits(b)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_first_of_equal_best_f1s_in_a_long_row(dtype):
    """3P / 7 positives, then (7 negatives, 3 positives) to the last positive: TP goes up by 3 and
    FP by 7, so F1 = 2 TP / (TP + FP + P) stays 3 / 5 (the same double: the same rational) at every
    third step from TP = 3P / 7 on, and is lower between.  The best F1 is the first of them
    (``np.argmax``), at recall 3 / 7, on no grid point: in a row long enough (P = 172,032 steps)
    that the compiled pass walks most of its leaves without a grid point, where the best F1 is a
    compare beside the envelope's chain."""
    p = 21 << 13
    first = 3 * p // 7
    tail = np.tile(np.array([False] * 7 + [True] * 3), (p - first) // 3)
    labels = np.concatenate([np.ones(first, dtype=bool), tail])
    scores = np.linspace(1.0, 0.0, labels.size)
    scores = scores.astype(dtype)
    assert np.unique(scores).size == scores.size and labels.sum() == p
    a, b = _both(lambda: precall.evaluate(labels, scores))
    assert _bits(a) == _bits(b)
    best = b.best_f1
    assert (best.f1, best.recall, best.precision) == (0.6, first / p, 1.0)
    assert best.threshold == float(scores[first - 1])


@pytest.mark.filterwarnings("ignore")  # weights near 1e300 overflow some convention terms, in both kernels alike
@pytest.mark.parametrize("signed_zero", [False, True])
@pytest.mark.parametrize("weights", ["1e-300..1e300", "tenths", "two scales"])
def test_large_inputs_with_wild_weights(weights, signed_zero):
    """The compensated sums (``compiled._add`` against ``sort.compensated_cumsum``) on 300000 rows
    of ties and weights of every magnitude: the same bits in the exact score keys' pass and,
    with a -0.0 among the scores, the index keys' pass."""
    rng = np.random.default_rng(11)
    n = 300_000
    scores = np.where(rng.random(n) < 0.5, np.round(rng.standard_normal(n), 2), rng.standard_normal(n))
    if signed_zero:
        scores[::5] = -0.0
    y = rng.random(n) < 0.2
    if weights == "1e-300..1e300":
        weight = 10.0 ** rng.uniform(-300, 300, n)
    elif weights == "tenths":
        weight = np.full(n, 0.1)
    else:
        weight = rng.uniform(0.5, 2.0, n) * rng.choice([1.0, 2.0**-40], n)
    data = check_binary(y, scores, weight)
    for ties in ("group", "stable"):
        a, b = _both(lambda: steps_and_grouped(data, ties))
        assert _bits(a) == _bits(b)
    a, b = _both(lambda: precall.evaluate(y, scores, sample_weight=weight, on_undefined="nan"))
    assert _bits(a) == _bits(b)


def test_signed_zero_and_one_class_take_the_numpy_route():
    data = check_binary([1, 0, 1], np.array([-0.0, 0.5, 0.0]))
    a, b = _both(lambda: steps_of(data, "group"))
    assert _bits(a) == _bits(b)
    assert backend.last_kernel() == "numpy"  # -0.0 has no exact tagged key
    data = check_binary([0, 0, 0], [0.1, 0.2, 0.3])
    a, b = _both(lambda: steps_of(data, "group"))
    assert _bits(a) == _bits(b) and isinstance(b, Steps)


def test_the_kernel_is_explicit_and_reported(monkeypatch):
    backend.set_kernel("numba")
    precall.average_precision([0, 1, 1, 0], [0.1, 0.8, 0.4, 0.3])
    assert backend.last_kernel() == "numba"
    backend.set_kernel("auto")
    precall.average_precision([0, 1, 1, 0], [0.1, 0.8, 0.4, 0.3])
    assert backend.last_kernel() == "numba"  # loaded in this process: every size
    monkeypatch.setattr(backend, "_module", [])  # a fresh process: not loaded
    precall.average_precision([0, 1, 1, 0], [0.1, 0.8, 0.4, 0.3])
    assert backend.last_kernel() == "numpy"  # below MIN_COMPILED samples, numba's import not paid
    assert backend.compiled(backend.MIN_COMPILED - 1) is None and backend._module == []
    assert backend.compiled(backend.MIN_COMPILED) is not None  # loads it
    assert backend.compiled(1) is not None
    assert backend.get_kernel() == "auto"
    with pytest.raises(ValueError, match="`kernel` must be one of 'auto', 'numpy', 'numba'; got 'fast'"):
        precall.set_kernel("fast")


def test_numba_missing(monkeypatch):
    monkeypatch.setattr(backend, "_module", [None])
    backend.set_kernel("auto")
    assert backend.compiled(10**9) is None
    backend.set_kernel("numba")
    with pytest.raises(ImportError, match=r"precall\[fast\]"):
        precall.average_precision([0, 1], [0.1, 0.8])


def test_a_bad_environment_variable_is_named(tmp_path):
    import subprocess
    import sys
    code = "import precall; precall.average_precision([0, 1], [0.1, 0.8])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "PRECALL_KERNEL": "gpu"})
    assert "`PRECALL_KERNEL` must be one of 'auto', 'numpy', 'numba'; got 'gpu'" in out.stderr


_FIRST_COMPILE = """
import numpy as np
from numba import njit
from precall._core import backend
backend.on_first_compile(lambda: print("notice"))
backend.set_kernel("numba")
module = backend.compiled(4)
njit(lambda x: x + 1)(1)  # another package's compile: no notice
print("theirs")
key = np.empty(4, dtype=np.uint64)
front = module.tag_ints(np.array([3, 1, -2, 5]), np.array([1, 0, 1, 0], dtype=np.uint8), key)
module.radix_sort(key[:front], np.empty(front, dtype=np.uint64))  # a second pass compiled
print("ours", front)
"""


def test_the_first_compile_is_announced_once(tmp_path):
    """``on_first_compile`` (the command line's notice): called once, when numba first compiles a pass
    of ours in a process whose cache has none; not for another package's compile, nor when
    the machine code is in numba's cache."""
    import os
    import subprocess
    import sys
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", _FIRST_COMPILE], capture_output=True, text=True, env=env,
                           timeout=300) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    assert runs[0].stdout.split("\n") == ["theirs", "notice", "ours 3", ""]
    assert runs[1].stdout.split("\n") == ["theirs", "ours 3", ""]  # loaded from the cache


def test_the_command_line_says_why_its_first_run_is_slow(monkeypatch, capsys):
    import importlib

    main = importlib.import_module("precall.cli.main")

    assert main._compile_notice in backend._notices
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    main._compile_notice()
    assert capsys.readouterr().err == ""  # not on a terminal: nothing
    monkeypatch.setattr("sys.stderr.isatty", lambda: True, raising=False)
    main._compile_notice()
    err = capsys.readouterr().err
    assert err == main.COMPILE_NOTICE + "\n" and len(err) <= 81 and "numba" in err


@pytest.mark.filterwarnings("ignore")
@settings(max_examples=200, deadline=None)
@given(inputs, st.sampled_from(["group", "stable"]), st.sampled_from(["numpy", "numba"]))
def test_overwrite_y_score_gives_the_same_numbers(case, ties, kernel):
    """``overwrite_y_score``: the same bits; the scores a permutation of theirs where the sort took their
    memory (grouped ties, no weights): decreasing where the compiled sort wrote its keys over them
    (float32/float64), the positives' then the negatives' each increasing on the numpy route; else
    untouched."""
    dtype, values, labels, weight = case
    scores = _scores(values, dtype)
    if weight is not None and not any(w > 0 for w in weight):
        weight = None
    y = np.array(labels, dtype=int)
    backend.set_kernel(kernel)
    want = precall.evaluate(y, scores, sample_weight=weight, pos_label=1, ties=ties, on_undefined="nan")
    own = scores.copy()
    got = precall.evaluate(y, own, sample_weight=weight, pos_label=1, ties=ties, on_undefined="nan",
                           overwrite_y_score=True)
    assert _bits(got) == _bits(want)
    kind, size = scores.dtype.kind, scores.dtype.itemsize
    negative_zero = kind == "f" and bool(np.any(np.signbit(scores) & (scores == 0)))
    compiled = (kernel == "numba" and len(scores) > 1 and y.any() and not negative_zero
                and (kind == "f" or size <= 4))  # the compiled sort of label-tagged keys
    if weight is not None or ties != "group" or (compiled and dtype not in (np.float64, np.float32)):
        assert own.tobytes() == scores.tobytes()  # untouched
    elif compiled:  # the keys written over the scores, then the scores put back, decreasing
        assert own.tobytes() == np.sort(scores)[::-1].tobytes()
    else:
        _assert_split(own, scores, y.astype(bool))


def _assert_split(own, scores, positive):
    """``own`` is what the numpy route's sort leaves of ``scores`` (``overwrite_y_score``): the positives'
    scores, then the negatives', each increasing; untouched where the positives score both 0.0 and -0.0
    (the zero ``np.sort`` puts first depends on the order it is given: it sorts copies then)."""
    zeros = scores[positive][scores[positive] == 0]
    if scores.dtype.kind == "f" and np.signbit(zeros).any() and not np.signbit(zeros).all():
        assert own.tobytes() == scores.tobytes()
        return
    k = int(positive.sum())
    for part, rows in ((own[:k], positive), (own[k:], ~positive)):  # (np.sort may trade a zero's sign)
        assert np.array_equal(part, np.sort(scores[rows]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_overwrite_y_score_at_scale_and_when_it_cannot(dtype):
    """Across the in-place sort's buckets (above its in-cache size); a read-only array, a strided one
    and weights leave the scores as they were, a ``-0.0`` sends them to the numpy route's split; a
    non-boolean option is refused."""
    rng = np.random.default_rng(7)
    n = 700_000
    y = rng.random(n) < 0.3
    scores = np.where(rng.random(n) < 0.5, np.round(rng.standard_normal(n), 2), rng.random(n) * 1e-6).astype(dtype)
    scores += 0.0  # no -0.0
    backend.set_kernel("numba")
    want = precall.evaluate(y, scores)
    own = scores.copy()
    assert _bits(precall.evaluate(y, own, overwrite_y_score=True)) == _bits(want)
    assert own.tobytes() == np.sort(scores)[::-1].tobytes()
    frozen = scores.copy()
    frozen.flags.writeable = False
    strided = np.repeat(scores, 2)[::2]
    for s, w in ((frozen, None), (strided, None), (scores.copy(), np.ones(n))):
        before = s.copy()
        assert _bits(precall.evaluate(y, s, sample_weight=w, overwrite_y_score=True)) == _bits(
            precall.evaluate(y, before, sample_weight=w))
        assert s.tobytes() == before.tobytes()
    for sign in (True, False):  # a -0.0: the numpy route, which splits the scores in place unless both zeros
        zero = scores.copy()
        zero[np.flatnonzero(y)[0]] = -0.0
        if not sign:
            zero[y & (zero == 0) & ~np.signbit(zero)] = 1.0  # the positives' zeros all -0.0
        before = zero.copy()
        assert _bits(precall.evaluate(y, zero, overwrite_y_score=True)) == _bits(precall.evaluate(y, before))
        _assert_split(zero, before, y)
    with pytest.raises(TypeError, match="`overwrite_y_score` must be True or False; got 'yes'"):
        precall.evaluate(y, scores, overwrite_y_score="yes")


def test_the_command_sorts_in_place_with_the_same_output(tmp_path, capsys, monkeypatch):
    """``precall evaluate FILE`` lends its score column to the sort (``overwrite_y_score``): its output
    the same as with the numpy kernel, which does not, also the best-F1 threshold's neighbours."""
    from precall._core import steps
    from precall.cli import main

    untagged, untag = [], steps.untag_scores
    monkeypatch.setattr(steps, "untag_scores", lambda *a: untagged.append(untag(*a)))

    rng = np.random.default_rng(3)
    n = 5000
    y = rng.random(n) < 0.2
    p = np.round(rng.random(n) * 0.7 + 0.3 * y, 4)
    path = tmp_path / "scores.csv"
    path.write_text("y,p\n" + "".join(f"{int(a)},{float(b)!r}\n" for a, b in zip(y, p)))
    outputs = []
    for kernel in ("numpy", "numba"):
        backend.set_kernel(kernel)
        for extra in ([], ["--json"], ["--at-recall", "0.5"]):
            assert main(["evaluate", str(path), "--label", "y", "--score", "p", *extra]) == 0
            outputs.append(capsys.readouterr().out)
    assert outputs[:3] == outputs[3:]
    assert len(untagged) == 2  # numba, without and with --json (a target reads the scores again)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 5000), st.sampled_from([0.0, 0.5, 1.0, 3.0, 97.0, 1e6, 2.5e9, 1e300])),
                min_size=1, max_size=20))
def test_worst_precision_sums_are_the_same_bits(pairs):
    """The minimum AP's precision sums (``conventions.worst_precision_sums`` and the one-pair sum):
    the compiled sum of terms computed in place equals numpy's pairwise sum of the array of terms."""
    from precall._core.conventions import _worst_precision_sum, worst_precision_sums

    pairs += [(2**20, 3.0), (300_001, 12.0), (2**20 + 1, 7.0)]
    p = np.array([a for a, _ in pairs], dtype=float)
    n = np.array([b for _, b in pairs])
    got = {}
    for kernel in ("numpy", "numba"):
        backend.set_kernel(kernel)
        got[kernel] = (worst_precision_sums(p, n).tobytes(),
                       [repr(_worst_precision_sum(*one)) for one in pairs[:3] + pairs[-3:]])
    assert got["numpy"] == got["numba"]
