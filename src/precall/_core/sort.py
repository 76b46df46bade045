"""The one sort: scores in decreasing order, ties grouped or in input order (numpy only).

Two routes, chosen by what the input needs:

* **no permutation** (unweighted input with grouped ties): the positives' and
  the negatives' scores are sorted apart with ``np.sort`` (:func:`sorted_split`)
  and the steps are counted with ``searchsorted`` (:mod:`precall._core.steps`);
* **a permutation** (weights, or stable ties): :func:`stable_descending_sort`
  sorts 64-bit keys ``(order-preserving score bits) << b | index`` with one
  ``np.sort`` (4-5x faster than ``argsort(kind="stable")``); :func:`rank` then
  gathers the labels (and weights) and forms the per-sample cumulative TP and
  FP, from which the table rows (:func:`table_arrays`) and the steps are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from . import scratch
from .validate import BinaryInput, Ties

__all__ = [
    "Ranked",
    "carried_keys",
    "compensated_cumsum",
    "cumulative_sums",
    "distinct_counts",
    "group_ends",
    "rank",
    "run_ends",
    "scratch_arrays",
    "sort_scores",
    "sorted_scores",
    "sorted_split",
    "splittable",
    "sorted_index_keys",
    "stable_descending_sort",
    "table_arrays",
    "tagged_keys",
    "tagged_scores",
    "untag_scores",
]


_INT64_MAX = np.int64(np.iinfo(np.int64).max)


_CHUNK = 1 << 20  # elements per chunk for in-place passes (bounded temporaries)
_SPLIT_BLOCK = 1 << 16  # rows per block of sorted_split's swaps (overwrite)


def _flip_negative_magnitudes(v: np.ndarray, sign_bit: int) -> None:
    """In place: IEEE bit patterns (as int64) to integers in numeric order."""
    for start in range(0, v.shape[0], _CHUNK):
        part = v[start : start + _CHUNK]
        mask = part >> sign_bit  # 0 for positive, -1 for negative numbers
        mask &= (1 << sign_bit) - 1
        part ^= mask


def _descending_key(scores: np.ndarray) -> tuple[np.ndarray, int]:
    """Unsigned integers that decrease as the scores increase, and their bit width.

    Floats are read through their IEEE bits (``-0.0`` first made ``+0.0``);
    flipping the magnitude bits of negative numbers makes integer order equal
    numeric order.  Integers are used as they are.
    """
    kind, size = scores.dtype.kind, scores.dtype.itemsize
    if kind == "f" and size <= 4:
        v = (scores.astype(np.float32, copy=False) + np.float32(0.0)).view(np.int32).astype(np.int64)
        _flip_negative_magnitudes(v, 31)
        width = 32
    elif kind == "f":
        v = (scores.astype(np.float64, copy=False) + 0.0).view(np.int64)
        _flip_negative_magnitudes(v, 63)
        width = 64
    elif kind == "u" and size == 8:
        v = scores.view(np.int64) ^ np.int64(np.iinfo(np.int64).min)
        width = 64
    elif size <= 4:  # 32-bit or narrower integers: shift into [0, 2**32)
        v = scores.astype(np.int64)
        if kind == "i":
            v += 1 << 31
        width = 32
    else:
        v = scores.astype(np.int64)
        width = 64
    if width == 32:
        if kind == "f":
            v += 1 << 31  # signed 32-bit order -> [0, 2**32)
        np.subtract(np.int64((1 << 32) - 1), v, out=v)  # in place: a large array is a page-faulting allocation
        return v.view(np.uint64), 32
    v ^= _INT64_MAX
    return v.view(np.uint64), 64


def descending_key_scores(key: np.ndarray, dtype: np.dtype, module: ModuleType | None = None) -> np.ndarray:
    """The scores of keys of :func:`_descending_key` (scores of ``dtype``: 32-bit keys for floats
    and integers of at most 32 bits, 64-bit keys for 8-byte floats and integers), the inverse of
    the key (``-0.0`` comes back as ``+0.0``, the key's one merge).  Float scores in one compiled
    pass when ``module`` (the compiled one) is given: the same bits."""
    if module is not None and dtype.kind == "f" and dtype.itemsize in (4, 8):
        wide = dtype.itemsize == 8
        bits = scratch.empty(key.shape[0], np.int64 if wide else np.int32)
        (module.key_scores64 if wide else module.key_scores32)(key.view(np.int64), bits)
        return bits.view(np.float64 if wide else np.float32)
    if dtype.itemsize == 8:
        w = key.view(np.int64) ^ _INT64_MAX
        if dtype.kind == "f":
            _flip_negative_magnitudes(w, 63)
            return w.view(np.float64)
        if dtype.kind == "u":
            return (w ^ np.int64(np.iinfo(np.int64).min)).view(np.uint64)
        return w
    v = np.int64((1 << 32) - 1) - key.astype(np.int64)
    if dtype.kind == "f":
        v -= 1 << 31
        _flip_negative_magnitudes(v, 31)
        return v.astype(np.int32).view(np.float32).astype(dtype)
    if dtype.kind == "i":
        v -= 1 << 31
    return v.astype(dtype)


def ascending_key(values: np.ndarray) -> np.ndarray | None:
    """int64 integers in the numeric order of ``values`` (equal exactly where the values
    are equal), or None for dtypes that have no such key (unsigned 64-bit, wider floats).

    Merging sorted runs of integers (``np.sort(kind="stable")``, a timsort) is
    about 1.5x faster than merging the floats they stand for.
    """
    kind, size = values.dtype.kind, values.dtype.itemsize
    if kind in "iub" and not (kind == "u" and size == 8):
        return values.astype(np.int64)
    if kind != "f" or size > 8:
        return None
    v = (values.astype(np.float64) + 0.0).view(np.int64)  # a copy; -0.0 made +0.0
    _flip_negative_magnitudes(v, 63)
    return v


_BLOCK = 1 << 16  # elements per block of the fused passes below (their temporaries stay in cache)


def _index_keys(scores: np.ndarray, shift: int) -> tuple[np.ndarray, int, int]:
    """The keys ``score_key << shift | index`` (the score key's low ``drop`` bits dropped
    when it does not fit), its width and ``drop``, built block by block in cache."""
    n = scores.shape[0]
    key = np.empty(n, dtype=np.uint64)
    width = drop = 0
    idx = np.arange(_BLOCK, dtype=np.uint64)
    for start in range(0, n, _BLOCK):
        part, width = _descending_key(scores[start : start + _BLOCK])
        drop = max(0, width + shift - 64)
        if drop:
            part >>= np.uint64(drop)
        part <<= np.uint64(shift)
        out = key[start : start + _BLOCK]
        np.add(idx[: out.shape[0]], np.uint64(start), out=out)
        out |= part
    return key, width, drop


def _reverse(a: np.ndarray) -> np.ndarray:
    """``a`` reversed in place (blocks of the two halves swapped: no full-size temporary)."""
    n = a.shape[0]
    half = n // 2
    for start in range(0, half, _BLOCK):
        stop = min(start + _BLOCK, half)
        front = a[start:stop].copy()
        a[start:stop] = a[n - stop : n - start][::-1]
        a[n - stop : n - start] = front[::-1]
    return a


def sorted_index_keys(scores: np.ndarray, module: ModuleType | None = None) -> tuple[np.ndarray, int, int, int]:
    """The keys ``score_key << shift | index`` sorted increasingly (decreasing scores, equal
    keys in input order), ``shift``, the score key's width and the low bits it dropped to fit
    (then neighbours may share a key but not a score).  Scores of at most 64 bits, n >= 2.
    Sorted by ``np.sort``, or by the compiled ``radix_sort`` of ``module`` when given."""
    shift = max(1, (scores.shape[0] - 1).bit_length())
    key, width, drop = _index_keys(scores, shift)
    if module is None:
        key.sort()
    else:
        module.radix_sort(key.view(np.int64), scratch.empty(key.shape[0], np.int64))
    return key, shift, width, drop


def scratch_arrays(count: int, length: int, dtype: Any) -> list[np.ndarray]:
    """``count`` uninitialised arrays of ``length`` entries of ``dtype``, for one call's buffers (the sort's,
    the step counts): rows of one allocation (:func:`precall._core.scratch.empty`, kept between calls).

    One allocation rather than ``count``: the step counts of 1e6 rows at 50% positives are 4,000,008 bytes
    each, just under the 4 MiB from which numpy asks for huge pages; as one block of 16 MB they fault once
    per 2 MiB instead of once per 4 KiB on a call that finds nothing kept.

    >>> a, b = scratch_arrays(2, 3, np.int64)
    >>> a.shape, b.flags.c_contiguous, np.shares_memory(a, b)
    ((3,), True, False)
    """
    return list(scratch.empty(count * length, dtype).reshape(count, length))


def carried_keys(scores: np.ndarray, positive: np.ndarray, weight: np.ndarray | None,
                 module: ModuleType) -> tuple[np.ndarray, np.ndarray] | None:
    """The exact score keys (:func:`_descending_key`, int64) sorted increasingly by the compiled
    ``radix_sort_carry`` (decreasing scores, equal scores in input order), carrying each row's
    weight signed by its label (negative for a positive; 1.0 without weights); None where a
    threshold would lose its sign (a ``-0.0`` among float scores) or the scores are wider than
    64 bits."""
    kind, size = scores.dtype.kind, scores.dtype.itemsize
    payload = np.int64 if weight is None else np.float64  # without weights the labels as +-1: integer counts
    if kind == "f" and size in (4, 8):  # keys and signed weights in one compiled pass
        key, signed = scratch.empty(scores.shape[0], np.int64), scratch.empty(scores.shape[0], payload)
        w = np.zeros(0) if weight is None else np.asarray(weight, dtype=np.float64)
        if not module.carry_floats(scores.view(np.int64 if size == 8 else np.int32), size == 8, positive, w,
                                   weight is not None, key, signed):
            return None
    else:
        if kind not in "fiu" or size > 8 or (kind == "f" and bool(np.signbit(scores[scores == 0]).any())):
            return None
        key = _descending_key(scores)[0].view(np.int64)  # a new array
        signed = np.ones(scores.shape[0], dtype=payload) if weight is None else np.array(weight, dtype=np.float64)
        np.negative(signed, out=signed, where=positive)
    module.radix_sort_carry(key, signed.view(np.int64), *scratch_arrays(2, key.shape[0], np.int64))
    return key, signed


def _overwritable(scores: np.ndarray) -> bool:
    """Whether the keys of :func:`tagged_keys` can be written over ``scores``' own memory."""
    flags = scores.flags
    return scores.dtype in (np.float32, np.float64) and scores.dtype.isnative and flags.c_contiguous and flags.writeable


def tagged_keys(scores: np.ndarray, positive: np.ndarray, module: ModuleType, overwrite: bool = False
                ) -> tuple[np.ndarray, int] | None:
    """Label-tagged keys (``|score|`` bits shifted left, the label in the low bit), the
    non-negative scores' keys ``key[:k]`` and the negative ones' ``key[k:]``, each part
    sorted increasingly, and ``k``; None where no such key is exact (64-bit integers,
    floats wider than 64 bits, a ``-0.0``).  uint32 keys for scores of at most 32 bits.  Float
    scores are tagged and sorted in one by the compiled ``tag_sort_floats`` (no second array of
    keys: ``precall evaluate``'s memory), integers tagged, then each part sorted by ``radix_sort``
    (the module is the compiled one).  With ``overwrite``, float32 and float64 scores of their own
    memory get their keys written over them (``tag_sort_floats_in_place``: no array of keys; about
    twice the sort's time), the returned keys a view of ``scores`` (:func:`untag_scores` puts the
    scores back, in another order)."""
    kind, size = scores.dtype.kind, scores.dtype.itemsize
    y = positive.view(np.uint8)
    if overwrite and _overwritable(scores):
        wide = size == 8
        bits = scores.view(np.int64 if wide else np.int32)
        mask = np.int64(0x7FFFFFFFFFFFFFFF) if wide else np.int32(0x7FFFFFFF)
        k, ok = module.tag_sort_floats_in_place(bits, bits if wide else scores.view(np.uint32), y.copy(), mask)
        return (scores.view(np.uint64 if wide else np.uint32), int(k)) if ok else None
    if kind == "f" and size <= 4:  # tagged and sorted in one, with no second array of keys
        bits = scores.astype(np.float32, copy=False).view(np.int32)
        key = scratch.empty(scores.shape[0], np.uint32)
        k, ok = module.tag_sort_floats(bits, y, key, np.int32(0x7FFFFFFF))
        return (key, int(k)) if ok else None
    if kind == "f" and size == 8:
        key = scratch.empty(scores.shape[0], np.uint64)
        k, ok = module.tag_sort_floats(scores.view(np.int64), y, key.view(np.int64), np.int64(0x7FFFFFFFFFFFFFFF))
        return (key, int(k)) if ok else None
    if kind not in "iu" or size > 4:
        return None
    key = scratch.empty(scores.shape[0], np.uint64)
    k = module.tag_ints(scores, y, key)
    keys = key.view(np.int64)
    other = scratch.empty(keys.shape[0], keys.dtype)
    for part in (slice(None, k), slice(k, None)):
        module.radix_sort(keys[part], other[part])
    return key, int(k)


def untag_scores(key: np.ndarray, k: int, module: ModuleType) -> None:
    """The scores whose keys :func:`tagged_keys` wrote over them (``overwrite``) put back in
    place, in decreasing order."""
    one = key.dtype.type(1)
    module.untag_floats(key, k, one, key.dtype.type(1 << (8 * key.dtype.itemsize - 1)))


def tagged_scores(mag: np.ndarray, n_front: int, dtype: np.dtype) -> np.ndarray:
    """The scores of magnitudes (uint64) read from tagged keys (``mag[n_front:]`` negative), as
    ``dtype`` (``mag`` may be reused)."""
    kind, size = dtype.kind, dtype.itemsize
    if kind == "f":
        bits = mag.astype(np.uint32 if size <= 4 else np.uint64, copy=False)
        bits[n_front:] |= np.uint32(1 << 31) if size <= 4 else np.uint64(1 << 63)
        return bits.view(np.float32 if size <= 4 else np.float64).astype(dtype, copy=False)
    v = mag.view(np.int64).copy()
    np.negative(v[n_front:], out=v[n_front:])
    return v.astype(dtype, copy=False)


def stable_descending_sort(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The permutation sorting ``scores`` decreasingly, equal scores in input
    order, and the sorted scores.

    One ``np.sort`` (SIMD) of the 64-bit keys ``score_key << b | index``, where
    ``b`` bits hold the index, replaces a merge-sort ``argsort`` (4x faster at
    1e7).  For 32-bit scores the key holds the whole score: the order is exact
    and the sorted scores are read back from the keys (no gather).  For 64-bit
    scores only the top ``64 - b`` bits fit: the sorted scores come from an
    ``np.sort`` of the values themselves (cheaper than gathering them through
    the permutation), and wherever two neighbours share a truncated key but not
    a score, that group of keys is re-sorted exactly (score, then index).  The
    passes over the keys run block by block, in cache.
    """
    n = scores.shape[0]
    if n < 2:
        return np.arange(n, dtype=np.int64), scores.copy()
    if scores.dtype.itemsize > 8 or n > 2**40:
        # wider than 64 bits (longdouble): a merge sort, stable by construction
        order = n - 1 - np.argsort(scores[::-1], kind="stable")[::-1]
        return order, scores[order]
    key, shift, width, drop = sorted_index_keys(scores)
    order = key.view(np.int64)  # the index bits, once the score bits are cleared
    low = np.uint64((1 << shift) - 1)
    if width == 32 and not drop:
        s = np.empty(n, dtype=scores.dtype)
        for start in range(0, n, _BLOCK):
            part = key[start : start + _BLOCK]
            s[start : start + _BLOCK] = descending_key_scores(part >> np.uint64(shift), scores.dtype)
            part &= low
    else:
        s = _reverse(sorted_scores(scores))
        shared = []  # truncated keys of neighbours with different scores (blocks overlap by one)
        for start in range(0, n - 1, _BLOCK):
            stop = min(start + _BLOCK + 1, n)
            high = key[start:stop] >> np.uint64(shift)
            found = np.flatnonzero((high[1:] == high[:-1]) & (s[start + 1 : stop] != s[start : stop - 1]))
            if found.size:
                shared.append(high[found])
        if shared:
            # collisions of truncated keys: re-sort each affected group exactly
            groups = np.unique(np.concatenate(shared)) << np.uint64(shift)
            lo = np.searchsorted(key, groups, side="left")
            lengths = np.searchsorted(key, groups | low, side="right") - lo
            key &= low
            pos = np.repeat(lo - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
            sub = order[pos]
            full_key, _ = _descending_key(scores[sub])
            order[pos] = sub[np.lexsort((sub, full_key))]
        else:
            key &= low
    if scores.dtype.kind == "f":
        zero = np.flatnonzero(s == 0)  # the keys (and np.sort) do not tell -0.0 from +0.0
        s[zero] = scores[order[zero]]
    return order, s



def group_ends(sorted_desc: np.ndarray) -> np.ndarray:
    """Index of the last element of each run of equal values."""
    ends = run_ends(sorted_desc)
    return np.arange(sorted_desc.shape[0]) if ends is None else ends



def distinct_counts(sorted_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of an increasingly sorted array and how often each occurs (int64)."""
    n = sorted_values.size
    if n == 0:
        return sorted_values, np.zeros(0, dtype=np.int64)
    starts = np.insert(np.flatnonzero(sorted_values[1:] != sorted_values[:-1]) + 1, 0, 0)
    return sorted_values[starts], np.diff(np.append(starts, n))



def sorted_scores(a: np.ndarray) -> np.ndarray:
    """``np.sort(a)``; float16 sorted as float32 (exact): numpy 2.4's SIMD sort of float16 (AVX-512
    without its FP16 instructions) leaves runs of ties out of order past a few thousand values."""
    if a.dtype == np.float16:
        return np.sort(a.astype(np.float32)).astype(np.float16)
    return np.sort(a)


def sort_scores(a: np.ndarray) -> None:
    """``a.sort()``, float16 as :func:`sorted_scores` sorts it."""
    if a.dtype == np.float16:
        a[...] = np.sort(a.astype(np.float32))
    else:
        a.sort()


def _misplaced(positive: np.ndarray, lo: int, hi: int, want: bool) -> Any:
    """The rows of ``lo:hi`` whose label is not ``want``, a block of rows at a time (int64 arrays)."""
    for a in range(lo, hi, _SPLIT_BLOCK):
        b = min(a + _SPLIT_BLOCK, hi)
        rows = np.flatnonzero(positive[a:b] != want)
        if rows.size:
            yield rows + a


def _split_in_place(scores: np.ndarray, positive: np.ndarray, n_pos: int) -> None:
    """Move the positives' scores to ``scores[:n_pos]`` and the negatives' to the rest, in place: the
    negatives found in front and the positives found behind are as many, and are swapped pair by pair,
    a block at a time (no array of the rows' size; the order within each part is not kept)."""
    front, back = _misplaced(positive, 0, n_pos, True), _misplaced(positive, n_pos, positive.shape[0], False)
    a = b = np.zeros(0, dtype=np.int64)
    while True:
        if not a.size:
            a = next(front, a)
        if not b.size:
            b = next(back, b)
        t = min(a.size, b.size)
        if not t:
            return
        held = scores[a[:t]]
        scores[a[:t]] = scores[b[:t]]
        scores[b[:t]] = held
        a, b = a[t:], b[t:]


def _both_zeros(scores: np.ndarray, positive: np.ndarray) -> bool:
    """Whether positives score both ``0.0`` and ``-0.0`` (a block of rows at a time): their run's
    threshold is the one ``np.sort`` puts first, which depends on the order it is given."""
    if scores.dtype.kind != "f":
        return False
    signs = set()
    for a in range(0, scores.shape[0], _SPLIT_BLOCK):
        block = scores[a:a + _SPLIT_BLOCK]
        zero = block == 0
        if not zero.any():
            continue
        negative = np.signbit(block[zero & positive[a:a + _SPLIT_BLOCK]])
        if negative.any():
            signs.add(True)
        if not negative.all():
            signs.add(False)
        if len(signs) == 2:
            return True
    return False


def splittable(scores: np.ndarray, positive: np.ndarray) -> bool:
    """Whether :func:`sorted_split` can sort ``scores`` in their own memory (``overwrite``) and give the
    numbers of the copies: a writeable contiguous array, not both signs of zero among the positives."""
    flags = scores.flags
    return scores.ndim == 1 and flags.c_contiguous and flags.writeable and not _both_zeros(scores, positive)


def sorted_split(data: BinaryInput, overwrite: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The positives' and the negatives' scores, each sorted increasingly (in place).

    With ``overwrite`` (and scores :func:`splittable`) the two parts are moved apart and sorted in
    ``data.scores``' own memory, and returned as its views ``[:P]`` and ``[P:]``: no copy of the
    scores (``precall evaluate``'s memory without the compiled kernel); ``data.scores`` no longer
    matches ``data.positive`` row by row."""
    if overwrite and splittable(data.scores, data.positive):
        n_pos = int(np.count_nonzero(data.positive))
        _split_in_place(data.scores, data.positive, n_pos)
        p, q = data.scores[:n_pos], data.scores[n_pos:]
    else:
        p, q = data.scores[data.positive], data.scores[~data.positive]
    sort_scores(p)
    sort_scores(q)
    return p, q



@dataclass(frozen=True)
class Ranked:
    """Samples in stable decreasing score order with per-sample cumulative TP
    and FP (internal; the stage between the permutation and table or steps)."""

    scores: np.ndarray
    positive: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    exact: bool

    @property
    def n_pos(self) -> float:
        return float(self.tp[-1]) if self.tp.size else 0.0  # no row: a slice whose weights are all zero

    @property
    def n_neg(self) -> float:
        return float(self.fp[-1]) if self.fp.size else 0.0


def rank(data: BinaryInput) -> Ranked:
    """Sort once (stable, decreasing) and accumulate; arrays reused in place.

    Weighted sums are float64 in stable order, compensated
    (:func:`compensated_cumsum` of ``where(y, w, 0)`` and of ``w - that``): each
    cumulative weight is within about an ulp of the exact sum whatever the number
    of rows, so every engine (compiled, streaming, Dask, Spark, ``by=``) agrees
    with it to that rounding, whatever the order or partitioning of the rows.
    scikit-learn's plain ``cumsum`` differs from it by its own rounding, which
    grows with the rows (up to 546 ulps, 7.6e-14 relative, at 1e7 rows of U(0.5, 2)
    weights).
    """
    order, s = stable_descending_sort(data.scores)
    y = data.positive[order]
    if data.weight is None:
        del order
        return ranked_counts(s, y)
    tp, fp = _weighted_cumsums(order, y, data.weight)
    return Ranked(s, y, tp, fp, False)


def compensated_cumsum(values: np.ndarray, out: np.ndarray | None = None,
                       carry: np.ndarray | None = None) -> np.ndarray:
    """Cumulative sums along the last axis within about an ulp of the exact sums, however many terms.

    numpy's sequential ``cumsum`` (``total``) plus the running sum of the rounding error of
    each of its additions, found exactly by Knuth's TwoSum: with ``previous`` the total
    before a value, ``part = total - previous`` and ``error = (previous - (total - part))
    + (value - part)``, so that ``previous + value == total + error`` exactly.  The result
    is ``total + cumsum(error)``.  The one weighted cumulative sum of precall: every route
    (:func:`rank`, the compiled passes of :mod:`precall._core.compiled`, which repeat these
    operations in this order, ``by=``, the accumulator, score ranges) forms its cumulative
    weights with it, so they agree to about an ulp of the exact sums, whatever the order,
    batching or partitioning of the rows (a plain ``cumsum``'s rounding grows with them).

    Parameters
    ----------
    values : ndarray of float64, 1-D or 2-D
        The terms; a 2-D array is summed along each row, each row on its own.
    out : ndarray of float64, optional
        Where to write the sums (the shape of ``values``, not ``values`` itself).
    carry : ndarray of float64 of shape (2,), optional
        1-D ``values`` only: the running ``total`` and running error before ``values[0]``
        (zeros when None), updated in place to those after its last value, so that blocks
        summed one after the other give the bits of one call on their concatenation.

    Returns
    -------
    ndarray of float64
        The cumulative sums (``out`` when given).

    Examples
    --------
    >>> import numpy as np
    >>> x = np.full(10, 0.1)
    >>> float(np.cumsum(x)[-1]), float(compensated_cumsum(x)[-1])
    (0.9999999999999999, 1.0)
    >>> carry = np.zeros(2)
    >>> first, second = compensated_cumsum(x[:4], carry=carry), compensated_cumsum(x[4:], carry=carry)
    >>> bool((np.concatenate([first, second]) == compensated_cumsum(x)).all())
    True
    """
    v = np.asarray(values, dtype=np.float64)
    total = np.empty_like(v) if out is None else out
    s0, e0 = (0.0, 0.0) if carry is None else (float(carry[0]), float(carry[1]))
    np.copyto(total, v)
    if v.shape[-1] == 0:
        return total
    total[..., 0] += s0
    np.cumsum(total, axis=-1, out=total)
    error = np.empty_like(v)  # first the previous totals
    error[..., 0] = s0
    error[..., 1:] = total[..., :-1]
    part = total - error
    np.subtract(error, total - part, out=error)  # previous - (total - part)
    np.subtract(v, part, out=part)  # value - part
    error += part
    del part
    error[..., 0] += e0
    np.cumsum(error, axis=-1, out=error)
    if carry is not None:
        carry[0], carry[1] = total[-1], error[-1]
    total += error
    return total


def cumulative_sums(values: np.ndarray) -> np.ndarray:
    """Cumulative counts or weights along the last axis: ``np.cumsum`` as int64 for integers
    (exact), :func:`compensated_cumsum` for floats (within about an ulp of exact).

    >>> cumulative_sums(np.array([1, 2], dtype=np.uint32)).dtype.name, float(cumulative_sums(np.full(10, 0.1))[-1])
    ('int64', 1.0)
    """
    if values.dtype.kind in "biu":
        return np.cumsum(values, axis=-1, dtype=np.int64)
    return compensated_cumsum(values)


def _weighted_cumsums(order: np.ndarray, y: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`compensated_cumsum` of ``where(y, w, 0)`` and of ``w - that`` for the weights
    ``w = weight[order]``, block by block in cache (the running totals and errors carried
    from block to block: the bits of one call on the whole)."""
    n = order.shape[0]
    tp = np.empty(n)
    fp = np.empty(n)
    t = np.empty(min(n, _BLOCK))
    f = np.empty(min(n, _BLOCK))
    carry_tp, carry_fp = np.zeros(2), np.zeros(2)
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        tb, fb = t[: stop - start], f[: stop - start]
        np.take(weight, order[start:stop], out=fb)
        tb.fill(0.0)
        np.copyto(tb, fb, where=y[start:stop])
        fb -= tb  # the negatives' weights (exactly w or 0)
        compensated_cumsum(tb, out=tp[start:stop], carry=carry_tp)
        compensated_cumsum(fb, out=fp[start:stop], carry=carry_fp)
    return tp, fp


def ranked_counts(sorted_scores: np.ndarray, positive: np.ndarray) -> Ranked:
    """Unweighted samples already in decreasing score order: their cumulative TP and FP."""
    tp = np.cumsum(positive, dtype=np.int64)
    fp = np.arange(1, positive.shape[0] + 1, dtype=np.int64)
    fp -= tp
    return Ranked(sorted_scores, positive, tp, fp, True)


def run_ends(sorted_desc: np.ndarray) -> np.ndarray | None:
    """Last index of each run of equal scores; None when all scores differ."""
    distinct = sorted_desc[1:] != sorted_desc[:-1]
    if distinct.all():
        return None
    return np.append(np.flatnonzero(distinct), sorted_desc.shape[0] - 1)



def table_arrays(data: BinaryInput, ties: Ties) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, float]:
    """The count table of validated input: ``(thresholds, tp, fp, n_pos, n_neg)``, thresholds
    decreasing, one row per distinct score (``"group"``) or per sample (``"stable"``)."""
    scores, positive, weight = data.scores, data.positive, data.weight
    if weight is None and ties == "group":
        # Distinct values and their multiplicities from one np.sort; the
        # positives per value from a sort of the positives alone.
        a = sorted_scores(scores)[::-1]
        ends = group_ends(a)
        thresholds = a[ends]
        total = ends + 1
        p = sorted_scores(scores[positive])[::-1]
        tp = np.zeros(thresholds.shape[0], dtype=np.int64)
        if p.size:
            p_ends = group_ends(p)
            # thresholds are decreasing: search in the reversed (increasing) view
            asc = thresholds[::-1]
            rows = thresholds.shape[0] - 1 - np.searchsorted(asc, p[p_ends])
            tp[rows] = np.diff(p_ends, prepend=-1)
            np.cumsum(tp, out=tp)
        fp = total - tp
        n_pos, n_neg = float(p.size), float(scores.size - p.size)
    else:
        ranked = rank(data)
        rows = run_ends(ranked.scores) if ties == "group" else None
        if rows is None:
            thresholds, tp, fp = ranked.scores, ranked.tp, ranked.fp
        else:
            thresholds, tp, fp = ranked.scores[rows], ranked.tp[rows], ranked.fp[rows]
        n_pos, n_neg = ranked.n_pos, ranked.n_neg
    return thresholds, tp, fp, n_pos, n_neg
