"""The compiled passes of the one sort (numba, the optional ``fast`` extra; imported lazily).

Loaded only through :func:`precall._core.backend.compiled`; nothing else imports numba.
Each pass gives exactly the numbers of the numpy route it replaces (the same integer
counts, the same float64 additions in the same order), so the choice of kernel never
changes a bit; ``tests/test_compiled.py`` checks that on random input.

* :func:`tag_sort_floats` writes the *label-tagged keys* already sorted: the bits of
  ``|score|`` shifted left by one with the label in the low bit, the non-negative
  scores at the front of the key array and the negative ones at the back, each part
  increasing (uint32 keys for scores of at most 32 bits); the keys go straight into
  their buckets of the most significant differing digit, so no second array of their
  size is needed.  :func:`tag_ints` (integer scores) writes them unsorted, each part
  then sorted by :func:`radix_sort`, and
* :func:`tagged_steps` walks the two parts in decreasing score order once and writes
  the steps (grouped ties, or stable ties when no score is shared by both classes).
* :func:`ranked_steps` walks keys ``score_key << shift | index`` sorted increasingly
  (:func:`precall._core.sort.sorted_index_keys`): it restores the exact order where
  truncated keys collide, gathers labels and weights, accumulates TP and FP in that
  order (compensated, :func:`_add`: the bits of ``precall._core.sort.compensated_cumsum``)
  and writes only the steps.
"""

from __future__ import annotations

import numpy as np
from numba import njit, objmode
from numba.core import event

__all__ = ["assemble_keys", "batch_numbers", "carried_steps", "carry_floats", "float32_keys", "key_checkpoints", "key_scores32", "key_scores64", "key_window", "numbers_prepass", "on_compile",
           "pad_steps", "radix_sort", "radix_sort_carry", "ranked_steps", "row_segment_sums", "score_major_pass", "score_runs_pass",
           "segment_sums", "slice_major_keys", "slice_major_steps", "sort_each_slice",
           "tag_ints", "tag_sort_floats", "tag_sort_floats_in_place", "tagged_steps",
           "untag_floats", "worst_precision_sums", "WINDOW"]


class _Compiling(event.Listener):
    """numba's compile events (its public event API) of this module's passes, passed on to ``callback``."""

    def __init__(self, callback):
        self.callback = callback

    def on_start(self, ev):
        data = ev.data if isinstance(ev.data, dict) else {}
        if getattr(getattr(data.get("dispatcher"), "py_func", None), "__module__", "") == __name__:
            self.callback()

    def on_end(self, ev):
        pass


def on_compile(callback):
    """Have ``callback()`` called whenever numba begins to compile one of this module's passes (a pass
    loaded from numba's cache is not compiled): ``backend.on_first_compile``."""
    event.register("numba:compile", _Compiling(callback))


@njit(cache=True, nogil=True)
def tag_ints(values, positive, key):  # pragma: no cover - compiled
    """Label-tagged keys of integer scores (at most 32 bits), unsorted: ``|value| << 1 | label``,
    the non-negative values from the front of ``key``, the negative ones from the back.  Returns
    the number of non-negative keys."""
    n = values.shape[0]
    front = 0
    back = n
    for i in range(n):
        v = np.int64(values[i])
        y = positive[i]
        if v < 0:
            back -= 1
            key[back] = ((-v) << 1) | y
        else:
            key[front] = (v << 1) | y
            front += 1
    return front


@njit(cache=True, nogil=True)
def _tagged_part(a, stable, cum_pos, cum_neg, j, mag, tp, dtp, fp, fp_prev):  # pragma: no cover - compiled
    """The steps of label-tagged keys ``a`` in decreasing score order (a part of
    :func:`tagged_steps`), from ``cum_pos`` / ``cum_neg`` rows above and ``j`` steps written.  A run's
    step is written whether or not it holds a positive, then kept by moving ``j`` on (one entry
    past the steps is written: the arrays have room for it); a branch on each row's label costs
    twice as much.  Returns ``(cum_pos, cum_neg, j)``, ``j`` -1 for stable ties when a score is
    shared by both classes."""
    n = a.shape[0]
    one = np.uint64(1)
    run_pos = 0
    run_len = 0
    for i in range(n):
        x = a[i]
        v = x >> one
        run_pos += np.int64(x & one)
        run_len += 1
        if i + 1 < n and a[i + 1] >> one == v:
            continue  # the run goes on
        run_neg = run_len - run_pos
        if stable and run_pos > 0 and (run_neg > 0 or run_pos > 1):
            if run_neg > 0:
                return cum_pos, cum_neg, -1
            for r in range(run_pos):  # stable ties, positives alone: a step a row
                u = np.uint64(j)
                mag[u] = v
                tp[u] = cum_pos + r + 1
                dtp[u] = 1
                fp[u] = cum_neg
                fp_prev[u] = cum_neg
                j += 1
        else:
            u = np.uint64(j)  # unsigned: no check for a negative index
            mag[u] = v
            tp[u] = cum_pos + run_pos
            dtp[u] = run_pos
            fp[u] = cum_neg + run_neg
            fp_prev[u] = cum_neg
            j += 1 if run_pos > 0 else 0
        cum_pos += run_pos
        cum_neg += run_neg
        run_pos = 0
        run_len = 0
    return cum_pos, cum_neg, j


@njit(cache=True, nogil=True)
def tagged_steps(key, k, stable, mag, tp, dtp, fp, fp_prev):  # pragma: no cover - compiled
    """The steps of label-tagged keys: ``key[:k]`` (non-negative scores) and ``key[k:]``
    (negative scores, by magnitude) each sorted increasingly.

    Position ``i`` of the decreasing order is ``key[k - 1 - i]`` for ``i < k``, else
    ``key[i]``.  Writes, per step, the magnitude bits of its score and its counts (the arrays
    hold the positives and one entry more).  Returns ``(steps, steps_of_non_negative_scores)``,
    or ``(-1, 0)`` for stable ties when a score is shared by both classes (their input order
    then matters).
    """
    cum_pos, cum_neg, j = _tagged_part(key[:k][::-1], stable, 0, 0, 0, mag, tp, dtp, fp, fp_prev)
    if j < 0:
        return -1, 0
    j_front = j
    cum_pos, cum_neg, j = _tagged_part(key[k:], stable, cum_pos, cum_neg, j, mag, tp, dtp, fp, fp_prev)
    if j < 0:
        return -1, 0
    return j, j_front


@njit(cache=True, nogil=True)
def _walk_part(a, i, cum_pos, cum_neg, j, j_from, j_stop, mag, tp, dtp, fp, fp_prev):  # pragma: no cover - compiled
    """The runs of a part of label-tagged keys (``a``, decreasing score order) from ``a[i]`` (a run's
    first row), with ``cum_pos`` / ``cum_neg`` rows above and ``j`` steps before: grouped ties' steps,
    as :func:`tagged_steps` writes them, those from ``j_from`` written at ``j - j_from``, until step
    ``j_stop`` (as :func:`_tagged_part`, each run's step is written, the earlier ones into the
    arrays' last entry, and kept by moving ``j`` on: no branch on the label; its own loop, as a loop
    shared with :func:`_tagged_part` made that one a third slower).  Returns ``(i, cum_pos, cum_neg, j)``."""
    b = a[i:]  # zero-based: no index checks
    n = b.shape[0]
    one = np.uint64(1)
    spare = np.uint64(tp.shape[0] - 1)
    run_pos = 0
    run_len = 0
    t = 0
    for t in range(n):
        x = b[t]
        v = x >> one
        run_pos += np.int64(x & one)
        run_len += 1
        if t + 1 < n and b[t + 1] >> one == v:
            continue  # the run goes on
        run_neg = run_len - run_pos
        u = min(np.uint64(j - j_from), spare)  # unsigned: a step before j_from goes to the spare entry
        mag[u] = v
        tp[u] = cum_pos + run_pos
        dtp[u] = run_pos
        fp[u] = cum_neg + run_neg
        fp_prev[u] = cum_neg
        cum_pos += run_pos
        cum_neg += run_neg
        j += np.int64(run_pos > 0)
        run_pos = 0
        run_len = 0
        if j >= j_stop:
            break
    return i + (t + 1 if n > 0 else 0), cum_pos, cum_neg, j


@njit(cache=True, nogil=True)
def _walk(key, k, ck, c, j_from, j_stop, mag, tp, dtp, fp, fp_prev):  # pragma: no cover - compiled
    """:func:`_walk_part` over both parts of :func:`tagged_steps`' keys from checkpoint ``c`` (:func:`key_checkpoints`:
    place ``q`` of the decreasing order, ``key[k - 1 - q]`` for ``q < k``, else ``key[q]``).  Returns ``j``."""
    q, cum_pos, j = ck[c, 0], ck[c, 1], ck[c, 2]
    cum_neg = q - cum_pos
    if q < k:
        i, cum_pos, cum_neg, j = _walk_part(key[:k][::-1], q, cum_pos, cum_neg, j, j_from, j_stop, mag, tp, dtp, fp,
                                            fp_prev)
        q = k if i == k else -1
    if q >= k and j < j_stop:
        i, cum_pos, cum_neg, j = _walk_part(key[k:], q - k, cum_pos, cum_neg, j, j_from, j_stop, mag, tp, dtp, fp,
                                            fp_prev)
    return j


@njit(cache=True, nogil=True)
def _block_counts(v):  # pragma: no cover - compiled
    """The steps and positives of a block of whole runs of label-tagged keys, increasing: a run holds a
    positive when its largest key (its last) is odd.  A loop without a branch (vector instructions)."""
    one = np.uint64(1)
    m = v.shape[0] - 1
    steps = positives = np.int64(v[m] & one)  # the block's last key ends a run
    for t in range(m):
        x = v[t]
        steps += np.int64(x & one) & np.int64(x != v[t + 1])  # odd and not equal: a larger score follows
        positives += np.int64(x & one)
    return steps, positives


@njit(cache=True, nogil=True)
def _part_checkpoints(key, lo_part, hi_part, down, every, ck, c, pos, j):  # pragma: no cover - compiled
    """:func:`key_checkpoints` of the part ``key[lo_part:hi_part]`` (increasing keys), walked in
    decreasing score order (``down``: from its end, the non-negative scores; else from its start,
    their places ``lo_part + i``): a checkpoint a block of about ``every`` rows, each block whole
    runs, counted in memory order.  Returns ``(c, pos, j)``."""
    one = np.uint64(1)
    if down:
        hi = hi_part
        while hi > lo_part:
            ck[c, 0], ck[c, 1], ck[c, 2] = hi_part - hi, pos, j
            c += 1
            lo = max(hi - every, lo_part)
            while lo > lo_part and key[lo - 1] >> one == key[lo] >> one:  # a block starts with a run
                lo -= 1
            steps, positives = _block_counts(key[lo:hi])
            pos += positives
            j += steps
            hi = lo
    else:
        lo = lo_part
        while lo < hi_part:
            ck[c, 0], ck[c, 1], ck[c, 2] = lo, pos, j
            c += 1
            hi = min(lo + every, hi_part)
            while hi < hi_part and key[hi - 1] >> one == key[hi] >> one:  # a block ends with a run
                hi += 1
            steps, positives = _block_counts(key[lo:hi])
            pos += positives
            j += steps
            lo = hi
    return c, pos, j


@njit(cache=True, nogil=True)
def key_checkpoints(key, k, every, t0, ck):  # pragma: no cover - compiled
    """Checkpoints of sorted label-tagged keys (:func:`tagged_steps`' layout) for their grouped ties'
    steps, without writing the steps: ``ck[c]`` a place of the decreasing order at which a run starts,
    about ``every`` rows apart, the positives and the steps above it, so that :func:`key_window` can
    write any steps again; counted a block at a time by loops without a branch.  Returns ``(steps,
    steps whose TP is below t0, steps of non-negative scores, checkpoints)``."""
    c, pos, j = _part_checkpoints(key, 0, k, True, every, ck, 0, 0, 0)
    front = j
    c, pos, j = _part_checkpoints(key, k, key.shape[0], False, every, ck, c, pos, j)
    ck[c, 0], ck[c, 1], ck[c, 2] = key.shape[0], pos, j  # the end
    lo, hi = 0, c  # the last checkpoint with fewer positives above it than t0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if np.float64(ck[mid, 1]) < t0:
            lo = mid
        else:
            hi = mid - 1
    below = 0
    if np.float64(ck[lo, 1]) < t0:  # the step that reaches t0 is in block lo (each block whole runs)
        steps = ck[lo + 1, 2] - ck[lo, 2]
        tp = np.empty(steps + 1, dtype=np.int64)
        e = np.empty(steps + 1, dtype=np.int64)
        _walk(key, k, ck, lo, ck[lo, 2], ck[lo + 1, 2], np.empty(steps + 1, dtype=np.uint64), tp, e, e, e)
        below = ck[lo, 2] + _count_below(tp, steps, t0)
    return j, below, front, c


@njit(cache=True, nogil=True)
def key_window(key, k, ck, n_ck, j_from, j_stop, mag, tp, dtp, fp, fp_prev):  # pragma: no cover - compiled
    """Steps ``j_from`` to ``j_stop`` of sorted label-tagged keys (grouped ties) written at
    ``[0, j_stop - j_from)``, walked from the last of the ``n_ck`` checkpoints before them
    (:func:`key_checkpoints`); the arrays need an entry more (:func:`_walk_part`).  Returns the
    steps written."""
    lo, hi = 0, n_ck - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ck[mid, 2] <= j_from:
            lo = mid
        else:
            hi = mid - 1
    return _walk(key, k, ck, lo, j_from, j_stop, mag, tp, dtp, fp, fp_prev) - j_from


@njit(cache=True, nogil=True)
def _exact_groups(key, shift, scores):  # pragma: no cover - compiled
    """Where neighbours share a truncated key but not a score, re-sort that group of keys
    exactly: decreasing score, then index (a stable merge sort of the group, which is in
    index order already, reversed twice); the new order goes into the keys' index bits."""
    n = key.shape[0]
    ushift = np.uint64(shift)
    low = (np.uint64(1) << ushift) - np.uint64(1)
    g = 0
    while g < n:
        high = key[g] >> ushift
        h = g + 1
        while h < n and key[h] >> ushift == high:
            h += 1
        m = h - g
        if m > 1:
            backwards = np.empty(m, dtype=scores.dtype)  # the group's scores, last index first
            same = True
            first = scores[np.int64(key[g] & low)]
            for t in range(m):
                v = scores[np.int64(key[g + t] & low)]
                backwards[m - 1 - t] = v
                if v != first:
                    same = False
            if not same:
                perm = np.argsort(backwards, kind="mergesort")
                index = np.empty(m, dtype=np.uint64)
                for t in range(m):
                    index[t] = key[g + m - 1 - perm[m - 1 - t]] & low
                for t in range(m):
                    key[g + t] = (high << ushift) | index[t]
        g = h


_BLOCK = 4096


@njit(cache=True, nogil=True, inline="always")
def _add(total, error, value):  # pragma: no cover - compiled
    """One term of :func:`precall._core.sort.compensated_cumsum`, its operations in its order:
    ``(total, error, sum)`` after adding ``value`` to the running ``total`` (the sequential
    sum) and ``error`` (the running sum of each addition's exact TwoSum error)."""
    new = total + value
    part = new - total
    error += (total - (new - part)) + (value - part)
    return new, error, new + error


@njit(cache=True, nogil=True, inline="always")
def _put_counts(at, tp, dtp, fp, fp_prev, j, where, tp_c, tp_above, fp_c, fp_above):  # pragma: no cover - compiled
    """Step ``j`` of a weighted pass: its row or key ``where``, cumulative TP and FP and the counts above it."""
    u = np.uint64(j)  # unsigned: no check for a negative index
    at[u] = where
    tp[u] = tp_c
    dtp[u] = tp_c - tp_above
    fp[u] = fp_c
    fp_prev[u] = fp_above


@njit(cache=True, nogil=True)
def ranked_steps(key, shift, exact_key, scores, positive, weight, weighted, stable,
                 rows, tp, dtp, fp, fp_prev):  # pragma: no cover - compiled
    """The steps of keys ``score_key << shift | index`` sorted increasingly (decreasing
    scores, equal keys in input order).

    Where the keys are truncated (``exact_key`` False) and neighbours share a key but not
    a score, the group is first re-sorted exactly (:func:`_exact_groups`).  Then, block by
    block, the labels and weights are gathered (a loop without branches, so the loads
    overlap) and TP and FP add ``t = w if positive else 0`` and ``w - t`` (``w`` = 1.0
    without ``weighted``) in that order, compensated (:func:`_add`), as the numpy route's
    ``compensated_cumsum`` does.  A step
    is a run of equal scores holding a positive (each positive sample with ``stable``), its
    ``dtp`` the difference of cumulative TP, as the numpy route forms it.  ``key`` ends
    holding the permutation.  Writes the steps' sample ``rows`` (the run ends) and returns
    ``(steps, total TP, total FP)``.
    """
    n = key.shape[0]
    ushift = np.uint64(shift)
    low = (np.uint64(1) << ushift) - np.uint64(1)
    if not exact_key:
        _exact_groups(key, shift, scores)
    idx = np.empty(_BLOCK, dtype=np.int64)
    yb = np.empty(_BLOCK, dtype=np.bool_)
    wb = np.empty(_BLOCK)
    tp_s = tp_e = tp_c = 0.0  # running sequential sums, their errors, the compensated sums
    fp_s = fp_e = fp_c = 0.0
    tp_above = 0.0  # cumulative counts at the end of the previous run (previous sample: stable)
    fp_above = 0.0
    any_pos = False
    j = 0
    for start in range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        m = stop - start
        for t in range(m):
            idx[t] = np.int64(key[start + t] & low)
        for t in range(m):
            yb[t] = positive[idx[t]]
        if weighted:
            for t in range(m):
                wb[t] = weight[idx[t]]
        else:
            for t in range(m):
                wb[t] = 1.0
        for t in range(m):
            i = start + t
            w = wb[t]
            d = w if yb[t] else 0.0
            tp_s, tp_e, tp_c = _add(tp_s, tp_e, d)
            fp_s, fp_e, fp_c = _add(fp_s, fp_e, w - d)
            any_pos = any_pos or yb[t]
            if not stable and i + 1 < n and key[i + 1] >> ushift == key[i] >> ushift:  # each sample a run: stable
                if exact_key or scores[np.int64(key[i + 1] & low)] == scores[idx[t]]:
                    continue  # the run goes on
            if any_pos:
                _put_counts(rows, tp, dtp, fp, fp_prev, j, i, tp_c, tp_above, fp_c, fp_above)
                j += 1
            tp_above = tp_c
            fp_above = fp_c
            any_pos = False
        for t in range(m):
            key[start + t] = np.uint64(idx[t])
    return j, tp_c, fp_c


@njit(cache=True, nogil=True)
def carry_floats(bits, wide, positive, weight, weighted, key, signed):  # pragma: no cover - compiled
    """In one pass: each float score's descending key (the numpy twin: ``sort._descending_key``;
    ``bits`` the scores' bits as int64 (``wide``, float64) or int32 (float32)) and its weight
    signed by its label (1 without ``weighted``, ``signed`` then int64), the inputs of
    :func:`radix_sort_carry` and :func:`carried_steps`.  Returns False at a ``-0.0`` (its threshold would lose its sign)."""
    top = np.int64(0x7FFFFFFFFFFFFFFF)
    for i in range(bits.shape[0]):
        v = np.int64(bits[i])
        if wide:
            if v == np.int64(-(2**63)):
                return False
            key[i] = v if v < 0 else v ^ top
        else:
            if v == np.int64(-(2**31)):
                return False
            if v < 0:
                v ^= np.int64(0x7FFFFFFF)
            key[i] = np.int64(0xFFFFFFFF) - (v + np.int64(2**31))
        w = weight[i] if weighted else 1.0
        signed[i] = -w if positive[i] else w
    return True


@njit(cache=True, nogil=True)
def carried_steps(key, signed_weight, stable, step_key, tp, dtp, fp, fp_prev):  # pragma: no cover - compiled
    """The steps of rows sorted by their exact score keys (increasing keys, decreasing scores,
    equal scores in input order: :func:`radix_sort_carry`), each row's weight carried signed by its
    label (negative for a positive; 1.0 without weights).  TP and FP add ``t = w if positive else
    0`` and ``w - t`` in that order, compensated (:func:`_add`), as :func:`ranked_steps` and the
    numpy route's ``compensated_cumsum``; without weights the payload is int64 (+-1) and the same
    operations count in integers (each error 0), written into int64 arrays;
    a step is a run of equal keys holding a positive (each positive sample with ``stable``).
    Writes each step's key and returns ``(steps, total TP, total FP)``.  Without branches on the
    labels: ``t`` is ``w * positive`` (the same float), and every run's end is written to the next
    step, which only a run holding a positive keeps (the arrays hold one entry more than the
    positive rows)."""
    n = key.shape[0]
    zero = signed_weight[0] - signed_weight[0]  # integer counts for an integer payload (no weights: +-1)
    tp_s = tp_e = tp_c = zero  # running sequential sums, their errors, the compensated sums
    fp_s = fp_e = fp_c = zero
    tp_above = zero
    fp_above = zero
    any_pos = 0
    j = 0
    for i in range(n):
        v = signed_weight[i]
        pos = np.int64(v < 0.0)
        w = abs(v)
        d = w * pos
        tp_s, tp_e, tp_c = _add(tp_s, tp_e, d)
        fp_s, fp_e, fp_c = _add(fp_s, fp_e, w - d)
        any_pos |= pos
        if not stable and i + 1 < n and key[i + 1] == key[i]:
            continue  # the run goes on
        _put_counts(step_key, tp, dtp, fp, fp_prev, j, key[i], tp_c, tp_above, fp_c, fp_above)
        j += any_pos
        tp_above = tp_c
        fp_above = fp_c
        any_pos = 0
    return j, tp_c, fp_c


@njit(cache=True, nogil=True)
def key_scores32(key, out):  # pragma: no cover - compiled
    """The float32 bits of the 32-bit descending keys ``key`` (int64): the one pass of
    ``precall._core.sort.descending_key_scores``' numpy passes for float32 scores."""
    for i in range(key.shape[0]):
        v = np.int64(0x7FFFFFFF) - key[i]
        if v < 0:
            v ^= 0x7FFFFFFF
        out[i] = np.int32(v)


@njit(cache=True, nogil=True)
def key_scores64(key, out):  # pragma: no cover - compiled
    """The float64 bits of the 64-bit descending keys ``key`` (int64): as :func:`key_scores32`."""
    for i in range(key.shape[0]):
        w = key[i] ^ np.int64(0x7FFFFFFFFFFFFFFF)
        if w < 0:
            w ^= np.int64(0x7FFFFFFFFFFFFFFF)
        out[i] = w


# ---------------------------------------------------------------------------
# slices (by=) and ragged batches
@njit(cache=True, nogil=True)
def int_range(values):  # pragma: no cover - compiled
    """The least and the greatest of the integers ``values`` (at least one) in one pass: numpy's
    ``values.min()`` and ``values.max()`` (two passes) for the slice codes of ``by=``."""
    low = values[0]
    high = values[0]
    for i in range(values.shape[0]):
        v = values[i]
        if v < low:
            low = v
        if v > high:
            high = v
    return low, high


@njit(cache=True, nogil=True)
def code_counts(codes, counts):  # pragma: no cover - compiled
    """``counts[c] += 1`` for each code ``c`` (int64 in ``0..counts.shape[0] - 1``, which the caller
    guarantees): ``np.bincount(codes, minlength=counts.shape[0])`` without its range passes."""
    for i in range(codes.shape[0]):
        counts[np.uint64(codes[i])] += 1


@njit(cache=True, nogil=True)
def assemble_keys(score_key, codes, negative, slice_bits):  # pragma: no cover - compiled
    """``score_key << (slice_bits + 1) | codes << 1 | negative`` in place, in one pass (the keys of
    ``precall.slices._score_major``; its numpy twin is the numpy route of ``_counted_steps``)."""
    shift = slice_bits + 1
    for i in range(score_key.shape[0]):
        score_key[i] = (score_key[i] << shift) | (codes[i] << 1) | (1 if negative[i] else 0)


@njit(cache=True, nogil=True, inline="always")
def _key32(bits):  # pragma: no cover - compiled
    """The 32-bit descending key of a float32 score given as its int32 ``bits``
    (``precall._core.sort._descending_key``: negative magnitudes flipped, ``-0.0`` as ``+0.0``)."""
    v = np.int64(bits)
    if v == -2147483648:  # -0.0
        v = 0
    elif v < 0:
        v ^= 0x7FFFFFFF
    return 2147483647 - v  # (2**32 - 1) - (v + 2**31)


@njit(cache=True, nogil=True, inline="always")
def _key64(bits):  # pragma: no cover - compiled
    """The 64-bit descending key (int64 read as unsigned) of a float64 score given as its int64 ``bits``."""
    v = bits
    if v == np.int64(-9223372036854775808):  # -0.0
        v = 0
    elif v < 0:
        v ^= np.int64(0x7FFFFFFFFFFFFFFF)
    return v ^ np.int64(0x7FFFFFFFFFFFFFFF)


@njit(cache=True, nogil=True)
def float32_keys(bits, codes, negative, slice_bits, out):  # pragma: no cover - compiled
    """:func:`assemble_keys` of float32 scores given as their int32 ``bits``: each score's 32-bit
    descending key (``precall._core.sort._descending_key``: negative magnitudes flipped, ``-0.0``
    as ``+0.0``) computed in the same pass, without the key array."""
    shift = slice_bits + 1
    for i in range(bits.shape[0]):
        out[i] = (_key32(bits[i]) << shift) | (codes[i] << 1) | (1 if negative[i] else 0)


@njit(cache=True, nogil=True)
def float64_keys(bits, out):  # pragma: no cover - compiled
    """The 64-bit descending keys of float64 scores given as their int64 ``bits`` (int64 read as
    unsigned), in one pass: ``precall._core.sort._descending_key``'s numpy passes (its twin)."""
    for i in range(bits.shape[0]):
        out[i] = _key64(bits[i])


@njit(cache=True, nogil=True, inline="always")
def _put_step(out, j, score, tp, fp, dtp, fp_prev):  # pragma: no cover - compiled
    """One step into column ``j`` of a pass's ``out`` (rows: score key, TP, FP, dTP, FP above)."""
    u = np.uint64(j)  # unsigned: no check for a negative index
    out[0, u] = score
    out[1, u] = tp
    out[2, u] = fp
    out[3, u] = dtp
    out[4, u] = fp_prev


@njit(cache=True, nogil=True, inline="always")
def _put_record(out, j, score, tp, fp, fp_prev):  # pragma: no cover - compiled
    """One step into row ``j`` of a pass's ``out_s`` (a record a step: score key, TP, FP, FP above;
    the slices' steps are written to m places at once, and one stream a slice, of 16 bytes a step
    with int32 records, is kinder to the caches than five streams of 8 bytes)."""
    u = np.uint64(j)  # unsigned: no check for a negative index
    out[u, 0] = score
    out[u, 1] = tp
    out[u, 2] = fp
    out[u, 3] = fp_prev


@njit(cache=True, nogil=True, inline="always")
def _score_step(out, o_steps, o_mixed, score, all_tp, all_fp, run_pos, run_neg):  # pragma: no cover - compiled
    """At the end of a run of one score: its step of all rows (when it holds a positive) into
    ``out``; returns the number of steps and whether a run held both classes."""
    if run_pos > 0:
        _put_step(out, o_steps, score, all_tp, all_fp, run_pos, all_fp - run_neg)
        return o_steps + 1, o_mixed or run_neg > 0
    return o_steps, o_mixed


@njit(cache=True, nogil=True)
def _slice_starts(cap):  # pragma: no cover - compiled
    """Where each slice's records start when each slice ``c`` is given room for ``cap[c]`` steps
    (its positive rows: a step holds at least one)."""
    start = np.zeros(cap.shape[0], dtype=np.int64)
    total = 0
    for c in range(cap.shape[0]):
        start[c] = total
        total += cap[c]
    return start


@njit(cache=True, nogil=True)
def _close_records(out_s, start, fill, dtp):  # pragma: no cover - compiled
    """The slices' records (each slice's from ``start[c]`` to ``fill[c]``) moved in place to follow
    one another, and each step's dTP: its TP less the TP of the slice's step before (0 for the
    first).  Returns each slice's number of steps and their total."""
    m = start.shape[0]
    per_slice = np.empty(m, dtype=np.int64)
    o = 0
    for c in range(m):
        s = start[c]
        length = fill[c] - s
        per_slice[c] = length
        src = out_s[s:s + length]  # zero-based views: no index checks
        dst = out_s[o:o + length]
        d = dtp[o:o + length]
        prev = np.int64(0)
        for j in range(length):
            t = np.int64(src[j, 1])
            if o != s:  # moved towards the start, in increasing order: a row is read before its place is written
                for q in range(4):
                    dst[j, q] = src[j, q]
            d[j] = t - prev
            prev = t
        o += length
    return per_slice, o


@njit(cache=True, nogil=True)
def _pass_results(sliced, out_s, start, fill, dtp, s_mixed, out, o_steps, o_mixed, tp, fp):  # pragma: no cover - compiled
    """What :func:`score_major_pass` and :func:`score_runs_pass` return: the slices' records closed
    up (:func:`_close_records`; none when the pass made all rows' steps alone) and all rows' steps."""
    if sliced:
        per_slice, total = _close_records(out_s, start, fill, dtp)
    else:
        per_slice, total = np.zeros(start.shape[0], dtype=np.int64), 0
    return (per_slice, out_s[:total], dtp[:total], s_mixed, out[0, :o_steps], out[1, :o_steps], out[2, :o_steps],
            out[3, :o_steps], out[4, :o_steps], o_mixed, tp, fp)


@njit(cache=True, nogil=True)
def slice_positives(codes, negative, cap):  # pragma: no cover - compiled
    """``cap[c]``: the positive rows of slice ``c`` (``codes`` int64 in ``0..cap.shape[0] - 1``):
    the room of each slice's steps in :func:`score_major_pass` and :func:`score_runs_pass`.  A pass
    of its own: counted inside the key passes it cost twice as much (the counts' stores wait on
    their loads)."""
    for i in range(codes.shape[0]):
        cap[np.uint64(codes[i])] += 0 if negative[i] else 1


@njit(cache=True, nogil=True)
def score_major_pass(hi, lo, shift, low_bits, cap, out, out_s, dtp, part=0):  # pragma: no cover - compiled
    """One pass over rows sorted by (score, slice, class): each row's score is ``hi >> shift``
    (read as unsigned), its ``slice << 1 | negative`` the lowest ``low_bits`` bits of ``lo`` (``lo``
    may be ``hi``: one array of keys ``score << low_bits | slice << 1 | negative``).  Yields the steps
    of every slice (each slice's in decreasing score, the slices one after another) and of all
    rows.  Compiled by numba (:mod:`precall._core.compiled`); the numpy route of
    :func:`_counted_steps` is its twin and the tests' oracle.

    ``cap`` (m,): each slice's positive rows (:func:`slice_positives`): the room of its steps,
    so one pass suffices.  ``out`` (5, at least the positive rows) int64, ``out_s`` (the positive
    rows, 4) int32 when the score keys and counts fit 32 bits (else int64) and ``dtp`` (the
    positive rows) int64, allocated by numpy (whose large arrays are backed by huge pages: the
    steps are written to m places at once, and 4 KB pages made that 3x slower), hold the steps
    (the returned arrays are views of them).  ``part``: 0 both, 1 the steps of all rows alone, 2
    the slices' alone (two threads can make the two parts at once; a part not made is empty).

    Returns ``(per_slice, s_records, s_dtp, s_mixed, o_key, o_tp, o_fp, o_dtp, o_fp_prev, o_mixed,
    n_pos, n_neg)``: each slice's number of steps, the slices' steps (a record a step: score key,
    TP, FP, FP above) and their dTP, whether a run of one score in a slice holds both classes;
    the steps of all rows and whether a run holds both classes; each slice's totals."""
    n = hi.shape[0]
    m = cap.shape[0]
    lmask = (1 << low_bits) - 1
    start = _slice_starts(cap)
    s_mixed = np.zeros(m, dtype=np.bool_)
    o_mixed = False
    o_steps = 0
    tp = np.zeros(m, dtype=np.int64)
    fp = np.zeros(m, dtype=np.int64)
    fill = start.copy()
    whole = part != 2
    sliced = part != 1
    sub_pos = 0
    sub_neg = 0
    run_pos = 0
    run_neg = 0
    all_tp = 0
    all_fp = 0
    for i in range(n):
        score = hi[i] >> shift
        last = i == n - 1
        new_score = last or (hi[i + 1] >> shift) != score
        if sliced:
            low = lo[i] & lmask
            c = np.uint64(low >> 1)  # unsigned: no check for a negative index
            if low & 1:
                fp[c] += 1
                sub_neg += 1
            else:
                tp[c] += 1
                sub_pos += 1
            if new_score or np.uint64((lo[i + 1] & lmask) >> 1) != c:  # the end of a (score, slice) run
                if sub_pos > 0:
                    _put_record(out_s, fill[c], score, tp[c], fp[c], fp[c] - sub_neg)
                    fill[c] += 1
                    if sub_neg > 0:
                        s_mixed[c] = True
                sub_pos = 0
                sub_neg = 0
        if whole:
            if lo[i] & 1:
                run_neg += 1
                all_fp += 1
            else:
                run_pos += 1
                all_tp += 1
            if new_score:
                o_steps, o_mixed = _score_step(out, o_steps, o_mixed, score, all_tp, all_fp, run_pos, run_neg)
                run_pos = 0
                run_neg = 0
    return _pass_results(sliced, out_s, start, fill, dtp, s_mixed, out, o_steps, o_mixed, tp, fp)


@njit(cache=True, nogil=True)
def pad_steps(tp, fp, dtp, fp_prev, starts, lengths, sel, out_tp, out_fp, out_dtp, out_fp_prev
              ):  # pragma: no cover - compiled
    """Slices ``sel`` of ragged steps (each ``lengths[c]`` steps from ``starts[c]``) as the rows of a
    batch of the rows' width, padded as ``precall.slices._buckets``' numpy route pads them (its
    oracle): past a slice's last step, that step again with no positive gained (dTP 0, FP above =
    FP)."""
    width = out_tp.shape[1]
    for r in range(sel.shape[0]):
        c = sel[r]
        s, n = starts[c], lengths[c]
        a, b, d, e = tp[s:s + n], fp[s:s + n], dtp[s:s + n], fp_prev[s:s + n]  # zero-based: no index checks
        for j in range(n):
            out_tp[r, j] = a[j]
            out_fp[r, j] = b[j]
            out_dtp[r, j] = d[j]
            out_fp_prev[r, j] = e[j]
        last = s + n - 1
        for j in range(n, width):
            out_tp[r, j] = tp[last]
            out_fp[r, j] = fp[last]
            out_dtp[r, j] = 0
            out_fp_prev[r, j] = fp[last]


_SIGN = np.int64(-(2**63))  # xor'd into int64 keys, signed order becomes the keys' unsigned order
_IN_CACHE = 1 << 18  # a bucket of at most this many rows is sorted by LSD passes of 8 bits (fastest of 2**13-2**30 at 1e7)
IN_CACHE = _IN_CACHE  # for callers: :func:`sort_each_slice` needs a buffer for a larger slice


@njit(cache=True, nogil=True)
def _bit_length(x):  # pragma: no cover - compiled
    """The number of bits of ``x`` read as unsigned 64 bits."""
    bits = 0
    while x != 0:
        x = (x >> 1) & np.int64(0x7FFFFFFFFFFFFFFF)
        bits += 1
    return bits


@njit(cache=True, nogil=True)
def _differing_bits(key, lo, hi):  # pragma: no cover - compiled
    """The number of low bits in which the keys ``key[lo:hi]`` differ (0: all equal)."""
    acc = np.int64(0)
    rows = key[lo:hi]  # zero-based: no check for a negative index
    first = rows[0]
    for i in range(1, hi - lo):
        acc |= rows[i] ^ first
    return _bit_length(acc)


@njit(cache=True, nogil=True)
def _scatter(src_k, src_p, dst_k, dst_p, lo, hi, shift, bounds, carry):  # pragma: no cover - compiled
    """Stable counting sort of rows ``lo:hi`` of ``src`` into ``dst`` by the 11-bit digit at
    ``shift``; ``bounds`` (2049,) gets each digit's start (offset by ``lo``); the payload moves
    with ``carry``."""
    mask = np.int64(2047)
    for j in range(2049):
        bounds[j] = 0
    sk = src_k[lo:hi]
    sp = src_p[lo:hi] if carry else src_p[:1]
    for i in range(hi - lo):
        bounds[np.uint64(((sk[i] >> shift) & mask) + 1)] += 1
    bounds[0] = lo
    for j in range(2048):
        bounds[j + 1] += bounds[j]
    fill = bounds[:2048].copy()
    for i in range(hi - lo):
        j = np.uint64((sk[i] >> shift) & mask)
        at = np.uint64(fill[j])
        dst_k[at] = sk[i]
        if carry:
            dst_p[at] = sp[i]
        fill[j] = at + np.uint64(1)


@njit(cache=True, nogil=True)
def _sort_small(src_k, src_p, dst_k, dst_p, lo, hi, bits, same, carry, t1k, t1p, t2k, t2p, digit=8
                ):  # pragma: no cover - compiled
    """Rows ``lo:hi`` of ``src`` (keys equal above their low ``bits`` bits) stably sorted into ``dst``
    (``same``: ``dst`` is ``src``): insertion below 33 rows, else LSD passes through two
    bucket-sized buffers, of ``digit`` bits (8: the radix sorts' buckets, where equal digits of
    at most 8 bits were slower) or, for a wider ``digit``, as few as digits of at most ``digit``
    bits allow, of equal widths (11 for :func:`sort_each_slice`: 33-bit keys in three passes of
    11 bits, not five of 8)."""
    m = hi - lo
    sk, dk = src_k[lo:hi], dst_k[lo:hi]
    sp = src_p[lo:hi] if carry else src_p[:1]
    dp = dst_p[lo:hi] if carry else dst_p[:1]
    if bits == 0 or m < 2:
        if not same:
            for i in range(m):
                dk[i] = sk[i]
                if carry:
                    dp[i] = sp[i]
        return
    if m <= 32:
        if not same:
            for i in range(m):
                dk[i] = sk[i]
                if carry:
                    dp[i] = sp[i]
        for i in range(1, m):  # stable: moves past strictly greater keys only
            k = dk[i]
            p = dp[i] if carry else dp[0]
            j = i - 1
            while j >= 0 and (dk[j] ^ _SIGN) > (k ^ _SIGN):
                dk[j + 1] = dk[j]
                if carry:
                    dp[j + 1] = dp[j]
                j -= 1
            dk[j + 1] = k
            if carry:
                dp[j + 1] = p
        return
    passes = (bits + digit - 1) // digit
    width = digit if digit <= 8 else (bits + passes - 1) // passes  # wide digits: equal, at most `digit` bits
    mask = (1 << width) - 1
    counts = np.zeros(1 << width, dtype=np.int64)
    a_k, a_p = sk, sp  # the source of the pass (the caller's rows, then a buffer)
    for p in range(passes):
        shift = width * p
        for j in range(1 << width):
            counts[j] = 0
        for i in range(m):
            counts[np.uint64((a_k[i] >> shift) & mask)] += 1
        total = 0
        for j in range(1 << width):
            c = counts[j]
            counts[j] = total
            total += c
        for i in range(m):
            j = np.uint64((a_k[i] >> shift) & mask)
            at = np.uint64(counts[j])
            t2k[at] = a_k[i]
            if carry:
                t2p[at] = a_p[i]
            counts[j] = at + np.uint64(1)
        t1k, t2k = t2k, t1k
        t1p, t2p = t2p, t1p
        a_k, a_p = t1k, t1p
    for i in range(m):
        dk[i] = t1k[i]
        if carry:
            dp[i] = t1p[i]


@njit(cache=True, nogil=True)
def radix_sort_carry(key, payload, other_k, other_p, carry=True):  # pragma: no cover - compiled
    """Sort ``key`` (int64 read as unsigned, or uint32) increasingly in place and move ``payload``
    with it; stable (equal keys keep their order).  ``other_k`` / ``other_p``: buffers of the same
    shapes, allocated by numpy (huge pages: the scatters write to 2048 places at once).  Most
    significant digit first: the 11 bits below the highest bit in which the keys differ scatter the
    rows into a buffer (a stable counting sort), then each bucket is sorted on its remaining
    differing bits: by LSD passes through bucket-sized buffers when it holds at most
    :data:`_IN_CACHE` rows, else by the next digit in the same way.  1e7 float64 keys with an
    int64 payload: 0.29 s against 0.56 s for LSD passes over the whole array on this project's
    machine.  Its numpy twin: ``order = np.argsort(key.view(np.uint64), kind="stable")``, then
    ``key[order]``, ``payload[order]``.  Without ``carry`` only the keys are sorted (``payload``
    may be any array of one element: :func:`radix_sort`)."""
    n = key.shape[0]
    if n < 2:
        return
    if n <= _IN_CACHE:  # one bucket: LSD passes back and forth between the rows and the caller's buffers, none
        # of its own (four of 8 bytes a row, numba's allocations, were faulted in again on every call)
        _sort_small(key, payload, key, payload, 0, n, _differing_bits(key, 0, n), True, carry, key, payload, other_k,
                    other_p)
        return
    t1k = np.empty(min(n, _IN_CACHE), dtype=key.dtype)
    t2k = np.empty(min(n, _IN_CACHE), dtype=key.dtype)
    t1p = np.empty(min(n, _IN_CACHE) if carry else 1, dtype=payload.dtype)
    t2p = np.empty(min(n, _IN_CACHE) if carry else 1, dtype=payload.dtype)
    bounds = np.empty(2049, dtype=np.int64)
    # a stack of ranges still to sort: (lo, hi, differing bits, 1 when the rows are in `other`)
    stack = np.empty((64 * 2048 // 8 + 8, 4), dtype=np.int64)
    stack[0, 0], stack[0, 1], stack[0, 2], stack[0, 3] = 0, n, _differing_bits(key, 0, n), 0
    top = 1
    while top > 0:
        top -= 1
        lo, hi, bits, inside = stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3]
        src_k, src_p = (other_k, other_p) if inside else (key, payload)
        if hi - lo <= _IN_CACHE or bits <= 11:
            if hi - lo > _IN_CACHE:  # few bits, many rows: LSD passes of the whole range in memory
                shift = 0
                while shift < bits:
                    dst_k, dst_p = (key, payload) if inside else (other_k, other_p)
                    _scatter(src_k, src_p, dst_k, dst_p, lo, hi, shift, bounds, carry)
                    src_k, src_p, inside = dst_k, dst_p, 1 - inside
                    shift += 11
                if inside:
                    for i in range(lo, hi):
                        key[i] = other_k[i]
                        if carry:
                            payload[i] = other_p[i]
            else:
                _sort_small(src_k, src_p, key, payload, lo, hi, bits, inside == 0, carry, t1k, t1p, t2k, t2p)
            continue
        shift = bits - 11
        dst_k, dst_p = (key, payload) if inside else (other_k, other_p)
        _scatter(src_k, src_p, dst_k, dst_p, lo, hi, shift, bounds, carry)
        for j in range(2048):
            b_lo, b_hi = bounds[j], bounds[j + 1]
            if b_hi > b_lo:
                stack[top, 0], stack[top, 1], stack[top, 3] = b_lo, b_hi, 1 - inside
                stack[top, 2] = _differing_bits(dst_k, b_lo, b_hi) if b_hi - b_lo > 1 else 0
                top += 1


@njit(cache=True, nogil=True)
def radix_sort(key, other):  # pragma: no cover - compiled
    """Sort ``key`` (int64 read as unsigned, or uint32) in place (``other``: a buffer of the same
    shape): :func:`radix_sort_carry` without a payload.  Its numpy twin is ``np.sort``: at 1e7 keys
    on this project's machine 0.18 s for uint64 (``np.sort`` 0.64-0.72 s, an LSD radix sort 0.32 s)
    and 0.11 s for uint32 (``np.sort`` 0.40 s) (``docs/benchmarks.md``)."""
    radix_sort_carry(key, key[:1], other, key[:1], False)


@njit(cache=True, nogil=True)
def _flag_pass(key, lo, hi, shift, mask, bounds):  # pragma: no cover - compiled
    """Rows ``lo:hi`` of ``key`` put in order of their digit ``(key >> shift) & mask`` in place
    (an American flag sort pass: each row swapped into its bucket, no buffer); ``bounds`` gets
    each digit's start (offset by ``lo``), then ``hi``."""
    size = mask + 1
    for j in range(size + 1):
        bounds[j] = 0
    for i in range(lo, hi):
        bounds[((key[i] >> shift) & mask) + 1] += 1
    bounds[0] = lo
    for j in range(size):
        bounds[j + 1] += bounds[j]
    head = bounds[:size].copy()
    for d in range(size):
        end = bounds[d + 1]
        while head[d] < end:
            v = key[head[d]]
            dv = (v >> shift) & mask
            while dv != d:  # the row goes to the next free place of its bucket; carry what was there
                at = head[dv]
                head[dv] = at + 1
                v, key[at] = key[at], v
                dv = (v >> shift) & mask
            key[head[d]] = v
            head[d] += 1


@njit(cache=True, nogil=True)
def _sort_range_in_place(key, lo, hi, bits, t1k, t2k, bounds, stack):  # pragma: no cover - compiled
    """Rows ``lo:hi`` of ``key`` (equal above their low ``bits`` bits) sorted in place: American flag
    passes of the most significant 11 differing bits while a range holds more than :data:`_IN_CACHE`
    rows, then LSD passes through the bucket-sized buffers ``t1k`` / ``t2k``."""
    none = key[:1]
    stack[0, 0], stack[0, 1], stack[0, 2] = lo, hi, bits
    top = 1
    while top > 0:
        top -= 1
        lo, hi, bits = stack[top, 0], stack[top, 1], stack[top, 2]
        if hi - lo <= _IN_CACHE:
            _sort_small(key, none, key, none, lo, hi, bits, True, False, t1k, none, t2k, none)
            continue
        width = min(bits, 11)
        shift = bits - width
        _flag_pass(key, lo, hi, shift, (1 << width) - 1, bounds)
        if shift == 0:
            continue  # every differing bit was in the digit
        for j in range(1 << width):
            b_lo, b_hi = bounds[j], bounds[j + 1]
            if b_hi - b_lo > 1:
                stack[top, 0], stack[top, 1] = b_lo, b_hi
                stack[top, 2] = _differing_bits(key, b_lo, b_hi)
                top += 1


@njit(cache=True, nogil=True)
def _tag_digits(bits, positive, sign_mask):  # pragma: no cover - compiled
    """The buckets of :func:`tag_sort_floats` (and of its in-place twin): the first pass counts the
    non-negative scores and finds the bits in which each part's keys differ (their OR against their
    AND), the second counts each part's rows per digit (its 11 highest differing bits).  Returns
    ``(k, ok, bounds, s_f, s_b, m_f, m_b)``: ``k`` non-negative scores, ``ok`` False for a ``-0.0``,
    ``bounds`` each digit's first row (front part at 0..2048, back part at 2049..4097), and the shift
    and mask of each part's digit."""
    n = bits.shape[0]
    k = 0
    or_f, and_f, or_b, and_b = np.int64(0), np.int64(-1), np.int64(0), np.int64(-1)
    fill = np.zeros(4098, dtype=np.int64)
    for i in range(n):
        b = np.int64(bits[i])
        if b < 0:
            mag = b & sign_mask
            if mag == 0:
                return 0, False, fill, 0, 0, 0, 0  # -0.0
            v = (mag << 1) | positive[i]
            or_b |= v
            and_b &= v
        else:
            v = (b << 1) | positive[i]
            or_f |= v
            and_f &= v
            k += 1
    nb_f = _bit_length(or_f ^ and_f) if k > 1 else 0
    nb_b = _bit_length(or_b ^ and_b) if n - k > 1 else 0
    w_f, w_b = min(nb_f, 11), min(nb_b, 11)
    s_f, s_b = nb_f - w_f, nb_b - w_b
    m_f, m_b = (1 << w_f) - 1, (1 << w_b) - 1
    for i in range(n):
        b = np.int64(bits[i])
        if b < 0:
            fill[np.uint64(2049 + ((((b & sign_mask) << 1) | positive[i]) >> s_b & m_b) + 1)] += 1
        else:
            fill[np.uint64((((b << 1) | positive[i]) >> s_f & m_f) + 1)] += 1
    fill[2049] = k
    for j in range(2048):
        fill[j + 1] += fill[j]
        fill[2050 + j] += fill[2049 + j]
    return k, True, fill, s_f, s_b, m_f, m_b


@njit(cache=True, nogil=True)
def _tag_bucket(b, y, sign_mask, s_f, s_b, m_f, m_b):  # pragma: no cover - compiled
    """A score's tagged key (``|bits| << 1 | label``) and its bucket in :func:`_tag_digits`' bounds."""
    if b < 0:
        v = ((b & sign_mask) << 1) | y
        return v, 2049 + (v >> s_b & m_b)
    v = (b << 1) | y
    return v, v >> s_f & m_f


@njit(cache=True, nogil=True)
def _sort_buckets(key, n, bounds, s_f, s_b):  # pragma: no cover - compiled
    """Each bucket of :func:`_tag_digits` (keys that agree above their digit's low end) sorted in place."""
    t1k = np.empty(min(n, _IN_CACHE), dtype=key.dtype)
    t2k = np.empty(min(n, _IN_CACHE), dtype=key.dtype)
    scratch = np.empty(2049, dtype=np.int64)
    stack = np.empty((64 * 2048 // 8 + 8, 3), dtype=np.int64)
    for part, shift in ((0, s_f), (2049, s_b)):
        if shift == 0:
            continue  # every differing bit was in the digit (or none differ)
        for j in range(part, part + 2048):
            lo, hi = bounds[j], bounds[j + 1]
            if hi - lo > 1:
                _sort_range_in_place(key, lo, hi, _differing_bits(key, lo, hi), t1k, t2k, scratch, stack)


@njit(cache=True, nogil=True)
def tag_sort_floats(bits, positive, key, sign_mask):  # pragma: no cover - compiled
    """Label-tagged keys of IEEE scores (given as signed integers ``bits``), each part sorted, with
    no buffer as large as the keys: they are never written unsorted.  :func:`_tag_digits` finds each
    part's buckets (its keys' 11 highest differing bits); a third pass writes each key into its
    digit's bucket; each bucket is then sorted in place (:func:`_sort_range_in_place`).  The keys are
    :func:`tag_ints`' layout (``|score bits| << 1 | label``); returns ``(k, ok)``: ``k`` non-negative
    scores, ``ok`` False for a ``-0.0`` (equal to ``+0.0`` but not of its bits: the caller takes the
    numpy route).  As fast as tagging then :func:`radix_sort` (0.11 s for 1e7 float32 scores,
    0.14-0.21 s for float64 on this project's machine), with one array of keys instead of two
    (``tests/test_compiled_slices.py``)."""
    n = bits.shape[0]
    k, ok, bounds, s_f, s_b, m_f, m_b = _tag_digits(bits, positive, sign_mask)
    if not ok:
        return 0, False
    fill = bounds.copy()
    for i in range(n):
        v, j = _tag_bucket(np.int64(bits[i]), positive[i], sign_mask, s_f, s_b, m_f, m_b)
        at = np.uint64(fill[np.uint64(j)])
        key[at] = v
        fill[np.uint64(j)] = at + np.uint64(1)
    _sort_buckets(key, n, bounds, s_f, s_b)
    return k, True


@njit(cache=True, nogil=True)
def tag_sort_floats_in_place(bits, key, label, sign_mask):  # pragma: no cover - compiled
    """:func:`tag_sort_floats` with the keys written over the scores' own bits: ``key`` is the memory
    of ``bits`` (the scores' signed bits) read as :func:`tag_sort_floats`' keys, no second array.  ``label`` (uint8, a copy: it is permuted) travels with
    its row while an American flag pass swaps each row into its bucket, each row tagged as it is
    placed; each bucket is then sorted in place.  The same keys as :func:`tag_sort_floats`;
    ``bits`` is untouched when ``ok`` is False (a ``-0.0``)."""
    n = bits.shape[0]
    k, ok, bounds, s_f, s_b, m_f, m_b = _tag_digits(bits, label, sign_mask)
    if not ok:
        return 0, False
    head = bounds.copy()
    for d in range(4097):
        if d == 2048:
            continue  # the front part's end (not a bucket)
        end = bounds[d + 1]
        while head[d] < end:  # the rows from head[d] on are untagged scores
            b = np.int64(bits[head[d]])
            y = label[head[d]]
            v, dv = _tag_bucket(b, y, sign_mask, s_f, s_b, m_f, m_b)
            while dv != d:  # the row goes to the next free place of its bucket; carry what was there
                at = head[dv]
                head[dv] = at + 1
                b = np.int64(bits[at])
                y_next = label[at]
                key[at] = v
                v, dv = _tag_bucket(b, y_next, sign_mask, s_f, s_b, m_f, m_b)
            key[head[d]] = v
            head[d] += 1
    _sort_buckets(key, n, bounds, s_f, s_b)
    return k, True


@njit(cache=True, nogil=True)
def untag_floats(key, k, one, sign):  # pragma: no cover - compiled
    """The scores of sorted label-tagged keys (:func:`tag_sort_floats_in_place`: ``key`` unsigned,
    ``key[:k]`` the non-negative scores' keys) written back in place, in decreasing order: the
    labels dropped (``>> one``), the front part reversed, the back part given its ``sign`` bit."""
    i, j = 0, k - 1
    while i < j:
        a = key[i] >> one
        key[i] = key[j] >> one
        key[j] = a
        i += 1
        j -= 1
    if i == j:
        key[i] = key[i] >> one
    for i in range(k, key.shape[0]):
        key[i] = (key[i] >> one) | sign


@njit(cache=True, nogil=True)
def score_runs_pass(key, payload, cap, out, out_s, dtp, part=0):  # pragma: no cover - compiled
    """One pass over rows sorted by their score keys alone (:func:`radix_sort_carry`: the rows of
    one score in any order), ``payload`` each row's ``slice << 1 | negative``: the same results
    as :func:`score_major_pass` (whose rows are sorted by score, slice and class too).  A slice's
    rows at one score are gathered while the score lasts (the slices touched are listed) and
    written as that slice's step when the score ends.  ``cap``, ``out``, ``out_s``, ``dtp`` and
    ``part`` as for :func:`score_major_pass`."""
    n = key.shape[0]
    m = cap.shape[0]
    start = _slice_starts(cap)
    s_mixed = np.zeros(m, dtype=np.bool_)
    o_mixed = False
    o_steps = 0
    tp = np.zeros(m, dtype=np.int64)
    fp = np.zeros(m, dtype=np.int64)
    sub_pos = np.zeros(m, dtype=np.int64)
    sub_neg = np.zeros(m, dtype=np.int64)
    mark = np.full(m, -1, dtype=np.int64)  # the last score run that touched the slice
    touched = np.empty(m, dtype=np.int64)
    n_touched = 0
    fill = start.copy()
    whole = part != 2
    sliced = part != 1
    run_pos = 0
    run_neg = 0
    all_tp = 0
    all_fp = 0
    run = 0
    begins = True  # row i begins a run of one score
    for i in range(n):
        low = payload[i]
        ends = i == n - 1 or key[i + 1] != key[i]
        if sliced and begins and ends:  # a score of one row (distinct scores): its step, if any, at once
            c = np.uint64(low >> 1)
            if low & 1:
                fp[c] += 1
            else:
                tp[c] += 1
                _put_record(out_s, fill[c], key[i], tp[c], fp[c], fp[c])
                fill[c] += 1
        elif sliced:
            c = np.uint64(low >> 1)  # unsigned: no check for a negative index
            if mark[c] != run:
                mark[c] = run
                touched[np.uint64(n_touched)] = c
                n_touched += 1
                sub_pos[c] = 0
                sub_neg[c] = 0
            if low & 1:
                fp[c] += 1
                sub_neg[c] += 1
            else:
                tp[c] += 1
                sub_pos[c] += 1
        if whole:
            if low & 1:
                run_neg += 1
                all_fp += 1
            else:
                run_pos += 1
                all_tp += 1
        begins = ends
        if ends:  # the score ends: every slice it touched
            score = key[i]
            for t in range(n_touched):
                c = np.uint64(touched[t])
                if sub_pos[c] > 0:
                    _put_record(out_s, fill[c], score, tp[c], fp[c], fp[c] - sub_neg[c])
                    fill[c] += 1
                    if sub_neg[c] > 0:
                        s_mixed[c] = True
            n_touched = 0
            if whole:
                o_steps, o_mixed = _score_step(out, o_steps, o_mixed, score, all_tp, all_fp, run_pos, run_neg)
            run_pos = 0
            run_neg = 0
            run += 1
    return _pass_results(sliced, out_s, start, fill, dtp, s_mixed, out, o_steps, o_mixed, tp, fp)


# ---- slice-major: the rows put together by slice, each slice sorted on its own (by= in two threads)
@njit(cache=True, nogil=True)
def slice_major_keys(bits, wide, codes, negative, starts, key, label):  # pragma: no cover - compiled
    """The rows put together by slice (stably: a counting sort by ``codes``, slice ``c`` from
    ``starts[c]``), each as ``score_key << 1 | negative`` in ``key``, the score key its score's
    descending key (``bits``: the scores' int32 bits, or int64 bits when ``wide``).  A float64
    key has no bit to spare but its highest, the score's sign: when every score has one sign,
    it is dropped (returns the keys' highest bit, int64, to put back: :func:`slice_major_steps`'
    ``top``); else (returns 1) ``key`` holds the score keys alone and a second pass writes the
    classes into ``label`` (1 negative; two streams a slice in one pass took 57 ms at 1e7 rows
    and 1,000 slices, the two passes 39)."""
    fill = starts[:-1].copy()
    any_bits = np.int64(0)
    all_bits = np.int64(-1)
    for i in range(bits.shape[0]):
        c = np.uint64(codes[i])
        at = np.uint64(fill[c])
        fill[c] = at + np.uint64(1)
        b = np.int64(bits[i])
        k = _key64(b) if wide else _key32(b)
        key[at] = (k << 1) | (1 if negative[i] else 0)
        any_bits |= k
        all_bits &= k
    if not wide or (any_bits ^ all_bits) >= 0:  # one sign: the keys' highest bit is all_bits'
        return all_bits & _SIGN
    fill = starts[:-1].copy()
    for i in range(bits.shape[0]):
        c = np.uint64(codes[i])
        at = np.uint64(fill[c])
        fill[c] = at + np.uint64(1)
        key[at] = _key64(np.int64(bits[i]))
        label[at] = 1 if negative[i] else 0
    return np.int64(1)


@njit(cache=True, nogil=True)
def sort_each_slice(key, label, starts, carry, other_k, other_p):  # pragma: no cover - compiled
    """Each slice's rows (``starts[c]:starts[c + 1]``) sorted increasingly by ``key`` in place,
    ``label`` moved with them when ``carry``: stable LSD passes of at most 11 bits through
    slice-sized buffers (a slice fits the caches: :data:`_IN_CACHE` rows; 1e7 rows in 1,000 slices:
    43 ms for float32 keys against 60 with passes of 8 bits, 97 against 102 for float64), or
    :func:`radix_sort_carry` through
    ``other_k`` / ``other_p`` (at least the largest slice's rows) for a larger slice."""
    big = 1
    for c in range(starts.shape[0] - 1):
        big = max(big, starts[c + 1] - starts[c])
    size = min(big, _IN_CACHE)
    t1k = np.empty(size, dtype=key.dtype)
    t2k = np.empty(size, dtype=key.dtype)
    t1p = np.empty(size if carry else 1, dtype=label.dtype)
    t2p = np.empty(size if carry else 1, dtype=label.dtype)
    for c in range(starts.shape[0] - 1):
        lo, hi = starts[c], starts[c + 1]
        n = hi - lo
        if n < 2:
            continue
        if n > _IN_CACHE:
            radix_sort_carry(key[lo:hi], label[lo:hi] if carry else label[:1], other_k[:n],
                             other_p[:n] if carry else other_p[:1], carry)
        else:
            _sort_small(key, label, key, label, lo, hi, _differing_bits(key, lo, hi), True, carry, t1k, t1p, t2k, t2p,
                        11)


@njit(cache=True, nogil=True)
def slice_major_steps(key, label, carry, top, starts, out_s, dtp, per_slice, s_mixed, n_pos, n_neg
                      ):  # pragma: no cover - compiled
    """Every slice's steps from its rows sorted by :func:`sort_each_slice` (each row's score key
    ``key >> 1`` with its highest bit ``top`` put back and class ``key & 1``, or with ``carry``
    ``key`` and ``label``; :func:`slice_major_keys`), the slices one
    after another: the records of :func:`score_major_pass` (score key, TP, FP, FP above) and
    their dTP, each slice's number of steps, whether a run of one score holds both classes, and
    its totals.  A run's step is written whether or not it holds a positive and kept by moving
    on (``out_s`` and ``dtp`` have one entry of room past the positive rows).  Returns the
    number of steps."""
    j = 0
    one = np.int64(1)
    low = np.int64(0x7FFFFFFFFFFFFFFF)
    for c in range(starts.shape[0] - 1):
        lo, hi = starts[c], starts[c + 1]
        rows = key[lo:hi]  # zero-based views: no index checks
        classes = label[lo:hi] if carry else label[:1]
        n = hi - lo
        first = j
        tp = 0
        fp = 0
        run_pos = 0
        run_len = 0
        mixed = False
        for i in range(n):
            if carry:
                score = rows[i]
                run_pos += 1 - np.int64(classes[i])
                same = i + 1 < n and rows[i + 1] == score
            else:
                score = ((rows[i] >> one) & low) | top
                run_pos += 1 - (rows[i] & one)
                same = i + 1 < n and rows[i + 1] >> one == rows[i] >> one
            run_len += 1
            if same:
                continue
            run_neg = run_len - run_pos
            _put_record(out_s, j, score, tp + run_pos, fp + run_neg, fp)
            dtp[np.uint64(j)] = run_pos
            j += 1 if run_pos > 0 else 0
            mixed = mixed or (run_pos > 0 and run_neg > 0)
            tp += run_pos
            fp += run_neg
            run_pos = 0
            run_len = 0
        per_slice[c] = j - first
        s_mixed[c] = mixed
        n_pos[c] = tp
        n_neg[c] = fp
    return j


@njit(cache=True, nogil=True)
def _leaf(values, s, n):  # pragma: no cover - compiled
    """numpy's sum of at most 128 values (the leaves of :func:`segment_sums`), ``values[s:s + n]``
    read through a zero-based view (numba checks no index for a negative value: 2x faster)."""
    v = values[s:s + n]
    if n < 8:
        res = -0.0
        for i in range(n):
            res += v[i]
        return res
    r0, r1, r2, r3 = v[0], v[1], v[2], v[3]
    r4, r5, r6, r7 = v[4], v[5], v[6], v[7]
    whole = n - n % 8
    for b in range(1, whole // 8):
        i = 8 * b
        r0 += v[i]
        r1 += v[i + 1]
        r2 += v[i + 2]
        r3 += v[i + 3]
        r4 += v[i + 4]
        r5 += v[i + 5]
        r6 += v[i + 6]
        r7 += v[i + 7]
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    for i in range(whole, n):
        res += v[i]
    return res


@njit(cache=True, nogil=True)
def _tree_buffers(lengths):  # pragma: no cover - compiled
    """Room for the leaves' starts (:func:`_leaf_starts`) and sums of the longest of ``lengths``."""
    longest = 0
    for j in range(lengths.shape[0]):
        longest = max(longest, lengths[j])
    return np.empty(longest // 64 + 3, dtype=np.int64), np.empty(longest // 64 + 2)


@njit(cache=True, nogil=True)
def segment_sums(values, starts, lengths):  # pragma: no cover - compiled
    """The compiled twin of :func:`precall._core.steps.segment_sums` (its numpy route is the oracle): numpy's
    pairwise tree of each segment (halves cut at a multiple of 8 down to leaves of at most 128
    values, :func:`_leaf_starts`), its leaves summed in order and added up the tree (:func:`_tree`)."""
    out = np.empty(starts.shape[0])
    at, leaf_sums = _tree_buffers(lengths)
    for j in range(starts.shape[0]):
        s, n = starts[j], lengths[j]
        for k in range(_leaf_starts(n, at)):
            leaf_sums[k] = _leaf(values, s + at[k], at[k + 1] - at[k])
        out[j] = _tree(leaf_sums, n)
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def worst_precision_sums(n_pos, n_neg, out):  # pragma: no cover - compiled
    """``np.sum(i / (i + N))`` over ``i = 1 .. P`` for each pair (``conventions.worst_precision_sums``,
    whose numpy route is the oracle): numpy's pairwise tree of the terms (:func:`_leaf_starts`,
    :func:`_tree`), each leaf's terms computed into a buffer of 128 just before it is summed (no
    array of all the terms)."""
    at, leaf_sums = _tree_buffers(n_pos)
    terms = np.empty(128)
    for j in range(n_pos.shape[0]):
        p, neg = n_pos[j], n_neg[j]
        for k in range(_leaf_starts(p, at)):
            s, n = at[k], at[k + 1] - at[k]
            for q in range(n):
                x = np.float64(s + 1 + q)
                terms[q] = x / (x + neg)
            leaf_sums[k] = _leaf(terms, 0, n)
        out[j] = _tree(leaf_sums, p) + 0.0


# ---------------------------------------------------------------------------
# the multi-class bootstrap's counting (precall.stats._segments)
@njit(cache=True, nogil=True)
def row_segment_sums(counts, order, bounds, out):  # pragma: no cover - compiled
    """``out[g] += counts[order[i]]`` for the rows ``i`` of segment ``g`` (``bounds[g]`` to
    ``bounds[g + 1]``): each row's draw counts of a block of replicates added into its run."""
    m = counts.shape[1]
    for g in range(bounds.shape[0] - 1):
        acc = out[g]
        for i in range(bounds[g], bounds[g + 1]):
            row = counts[order[i]]
            for r in range(m):
                acc[r] += row[r]


# ---------------------------------------------------------------------------
# every number of a batch of steps (precall._core.evaluation.batch_numbers)
@njit(cache=True, nogil=True)
def _leaf_starts(n, out):  # pragma: no cover - compiled
    """The leaves of numpy's pairwise sum of ``n`` values (:func:`segment_sums`' tree), in order:
    their starts go into ``out``, then ``n``; returns their number (one empty leaf for ``n = 0``)."""
    ss = np.empty(128, dtype=np.int64)
    sn = np.empty(128, dtype=np.int64)
    top = 0
    ss[0], sn[0] = 0, n
    count = 0
    while top >= 0:
        s, c = ss[top], sn[top]
        top -= 1
        if c <= 128:
            out[count] = s
            count += 1
        else:
            half = c // 2
            half -= half % 8
            top += 1
            ss[top], sn[top] = s + half, c - half
            top += 1
            ss[top], sn[top] = s, half
    out[count] = n
    return count


@njit(cache=True, nogil=True)
def _tree(leaf_sums, n):  # pragma: no cover - compiled
    """numpy's sum of ``n`` values from the sums of its leaves (:func:`_leaf_starts`), added up the
    same tree as :func:`segment_sums`."""
    ss = np.empty(64, dtype=np.int64)
    sn = np.empty(64, dtype=np.int64)
    phase = np.empty(64, dtype=np.int64)
    acc = np.empty(64)
    top, vals, nxt = 0, 0, 0
    ss[0], sn[0], phase[0] = 0, n, 0
    while top >= 0:
        s, c = ss[top], sn[top]
        if c <= 128:
            acc[vals] = leaf_sums[nxt]
            nxt += 1
            vals += 1
            top -= 1
            continue
        half = c // 2
        half -= half % 8
        if phase[top] == 0:
            phase[top] = 1
            top += 1
            ss[top], sn[top], phase[top] = s, half, 0
        elif phase[top] == 1:
            phase[top] = 2
            top += 1
            ss[top], sn[top], phase[top] = s + half, c - half, 0
        else:
            vals -= 1
            acc[vals - 1] = acc[vals - 1] + acc[vals]
            top -= 1
    return acc[0] + 0.0


@njit(cache=True, nogil=True)
def _start_sum(q, n, starts, cur, leaf_sums):  # pragma: no cover - compiled
    """Sum ``q`` of a row will receive ``n`` values, last first: its leaves (``starts[q]``), the
    current one (``cur[q]``), and the sum of no value."""
    cur[q] = _leaf_starts(n, starts[q]) - 1
    if n == 0:
        leaf_sums[q, 0] = -0.0  # what _leaf gives for no value


@njit(cache=True, nogil=True)
def _maximum(a, b):  # pragma: no cover - compiled
    """``np.maximum`` of two floats (NaN wins)."""
    if a != a:
        return a
    if b != b:
        return b
    return a if a >= b else b


@njit(cache=True, nogil=True, error_model="numpy")  # x / 0 is inf or NaN, as in numpy
def numbers_prepass(tp, fp, dtp, fp_prev, n_pos, lengths, voc_mode, exact, offsets, ratio, unit,
                    changed):  # pragma: no cover - compiled
    """The first pass of :func:`batch_numbers`, per row: the weight unit of the COCO precision
    (``conventions._weight_unit``), the number of recall changes of ``voc2010_sum`` and, for each
    of the first ``lengths`` steps, the ratio whose ``np.log1p`` Davis & Goadrich's area takes
    (``conventions.interpolated_areas``; numba's ``log1p`` is not numpy's to the last bit, so numpy
    applies it between the passes), at ``ratio[offsets[i] + j]``."""
    m, r = tp.shape
    tied = np.empty(_CHUNK, dtype=np.int64)  # _dg_ratios' steps with negatives tied, a block at a time
    for i in range(m):
        p = n_pos[i]
        length = lengths[i]
        if not exact:
            u = np.inf
            for j in range(r):
                d = dtp[i, j]
                if d > 0 and d < u:
                    u = d
            unit[i] = u if u < np.inf else 1.0
        if voc_mode != 2:
            stop = length if voc_mode == 1 else r
            c = 0
            if exact and 0 < p < 2.0**52:  # distinct counts below 2**52 have distinct recalls: no division
                for j in range(stop):
                    c += tp[i, j] != (tp[i, 0] - dtp[i, 0] if j == 0 else tp[i, j - 1])
            else:
                for j in range(stop):
                    before = (np.float64(tp[i, 0] - dtp[i, 0]) if j == 0 else np.float64(tp[i, j - 1])) / p
                    if np.float64(tp[i, j]) / p - before != 0:
                        c += 1
            changed[i] = c
        o = offsets[i]
        _dg_ratios(tp[i, :length], fp[i, :length], dtp[i, :length], fp_prev[i, :length], ratio[o:o + length], tied)


@njit(cache=True, nogil=True, error_model="numpy")
def _dg_ratios(tpr, fpr, dtpr, fpa, out, tied):  # pragma: no cover - compiled
    """The ratio whose ``np.log1p`` Davis & Goadrich's area takes, per step (zero-based views: no
    index checks): :func:`numbers_prepass` for a whole row, :func:`batch_numbers` a window at a time.
    A step without negatives tied (``fp == fp_prev``) has slope 0 and ``c = 1``: ``d * 1 / b`` is
    ``d / b``; the others (few, found a block of ``tied.shape[0]`` at a time) take the whole formula."""
    n = out.shape[0]
    for j in range(n):
        d = np.float64(dtpr[j])
        b = np.float64(tpr[j]) - d + np.float64(fpa[j])
        out[j] = d / b if dtpr[j] > 0 and b > 0 else 0.0
    size = tied.shape[0]
    for s in range(0, n, size):
        k = min(size, n - s)
        for t in range(_tied_steps(fpr[s:s + k], fpa[s:s + k], k, tied)):
            j = s + tied[t]
            out[j] = _dg_ratio(tpr[j], fpr[j], dtpr[j], fpa[j])


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _dg_ratio(tp, fp, dtp, fp_prev):  # pragma: no cover - compiled
    """:func:`_dg_ratios`' ratio of one step, 0 for no positive gained."""
    if dtp <= 0:
        return 0.0
    d = np.float64(dtp)
    fa = np.float64(fp_prev)
    a = np.float64(tp) - d
    c = (np.float64(fp) - fa) / d + 1.0
    b = a + fa
    return d * c / b if b > 0 else 0.0


@njit(cache=True)
def _numpy_log1p(values):  # pragma: no cover - compiled
    """``np.log1p`` in place by numpy itself (numba's, libm's, differs in the last bit from numpy's
    SIMD one): the GIL is taken for the call, about 1 us."""
    with objmode():
        np.log1p(values, out=values)


@njit(cache=True, nogil=True)
def _no_negatives(fp, fp_prev, k):  # pragma: no cover - compiled
    """Whether none of the first ``k`` steps adds a negative (``fp == fp_prev``: distinct scores)."""
    same = True
    for j in range(k):
        same &= fp[j] == fp_prev[j]
    return same


@njit(cache=True, nogil=True, inline="always")
def _grid_values(terms, t, tp, i, j, reference, int_scale):  # pragma: no cover - compiled
    """Step ``j``'s recall as :func:`batch_numbers` compares it with the VOC 2007 and COCO grids: the
    float recall (``terms[9, t]``) for the reference grids, else its count scaled by 10 and 100."""
    if reference:
        return terms[9, t], terms[9, t]
    if int_scale:
        return np.float64(tp[i, j] * 10), np.float64(tp[i, j] * 100)
    return np.float64(tp[i, j]) * 10.0, np.float64(tp[i, j]) * 100.0


@njit(cache=True, nogil=True)
def _all_nonzero(values, k):  # pragma: no cover - compiled
    """Whether none of the first ``k`` values is zero."""
    ok = True
    for j in range(k):
        ok &= values[j] != 0
    return ok


@njit(cache=True, nogil=True, error_model="numpy")
def _prg_first(tp, fp, dtp, fp_prev, i, j, t0, p, ratio_pn, term):  # pragma: no cover - compiled
    """AUPRG's term of the first step from recall gain 0 (``j``, :func:`batch_numbers`): ``term``, or
    when the step starts below recall gain 0, the segment from the crossing."""
    b = np.float64(tp[i, j])
    a = b - np.float64(dtp[i, j])
    if a < t0:  # the segment crossing recall gain 0 starts at the crossing
        fb = np.float64(fp[i, j])
        fa = np.float64(fp_prev[i, j])
        fa = fa + (t0 - a) / (b - a) * (fb - fa)
        a = t0
        rg_a = 1.0 - ratio_pn * (p - a) / a
        pg_a = 1.0 - ratio_pn * fa / a
        rg_b = 1.0 - ratio_pn * (p - b) / b
        pg_b = 1.0 - ratio_pn * fb / b
        term = (rg_b - rg_a) * (pg_b + pg_a)
    return term


@njit(cache=True, nogil=True)
def _scan_leaf(terms, at, k, first, lo, env, env_c, best_value, best_k, out):  # pragma: no cover - compiled
    """The backward walk of :func:`batch_numbers` over a leaf of ``k`` steps whose terms start at
    ``terms[:, at]`` (step ``lo``), no grid point passed: the envelopes (``first``: the leaf's index of
    the row's last entry, where they start), the best F1, and voc2010's terms into ``out[:k]``.

    Without NaN among the precisions (integer counts: every step has TP + FP > 0) ``np.maximum`` is a
    max instruction and the best F1 a compare beside it: the loop carries three one-cycle chains, its
    index unsigned (numba checks a signed one for negative values, four instructions a load)."""
    prec, coco, f1, width = terms[0, at:at + k], terms[1, at:at + k], terms[2, at:at + k], terms[6, at:at + k]
    nan = first < k - 1  # entries after the row's last: the general loop
    for q in range(k):
        nan |= (prec[q] != prec[q]) | (coco[q] != coco[q])
    if nan:
        for q in range(k - 1, -1, -1):
            if q == first:
                env = prec[q]
                env_c = coco[q]
            else:
                env = _maximum(env, prec[q])
                env_c = _maximum(env_c, coco[q])
            value = f1[q]
            if value >= best_value:  # backwards: the first among equals
                best_value = value
                best_k = lo + q
            w = width[q]
            out[q] = w * env if w != 0 else 0.0
        return env, env_c, best_value, best_k
    if first == k - 1:
        env = prec[first]
        env_c = coco[first]
    for t in range(k):
        q = np.uint64(k - 1 - t)
        x = prec[q]
        env = x if x > env else env  # np.maximum without NaN (no -0.0 either: TP / (TP + FP) >= +0)
        y = coco[q]
        env_c = y if y > env_c else env_c
        value = f1[q]
        if value >= best_value:  # backwards: the first among equals (F1 is never NaN here, nor -0.0)
            best_k = lo + k - 1 - t
        best_value = value if value > best_value else best_value
        w = width[q]
        out[q] = w * env if w != 0 else 0.0
    return env, env_c, best_value, best_k


@njit(cache=True, nogil=True)
def _fill_leaves(src, n, top, buf, starts, leaf, leaf_lo, leaf_sums):  # pragma: no cover - compiled
    """Places ``top - n + 1`` to ``top`` of a sum filled last first (:func:`batch_numbers`' voc2010 and
    AUPRG sums) get ``src[:n]``: copied into the current leaf's buffer ``buf`` (the leaf ``leaf``
    starting at place ``leaf_lo``), each leaf summed into ``leaf_sums`` once its first place is
    filled.  Returns the current leaf and its start."""
    hi = top
    x_hi = n
    while x_hi > 0:
        seg_lo = max(hi - x_hi + 1, leaf_lo)
        count = hi - seg_lo + 1
        dst = buf[seg_lo - leaf_lo:hi - leaf_lo + 1]
        part = src[x_hi - count:x_hi]
        for y in range(count):
            dst[y] = part[y]
        x_hi -= count
        if seg_lo == leaf_lo:
            leaf_sums[leaf] = _leaf(buf, 0, starts[leaf + 1] - leaf_lo)
            leaf -= 1
            leaf_lo = starts[max(leaf, 0)]
        hi = seg_lo - 1
    return leaf, leaf_lo


_TERMS = 256  # padding entries a block (a loop without branches: vector divisions)
_CHUNK = 2048  # entries whose terms are computed at once, forwards, though the blocks are read last first
WINDOW = _CHUNK + _TERMS  # room for a chunk of :func:`batch_numbers` with ``windowed``


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _step_terms(tp, fp, p, dense, unit_eps):  # pragma: no cover - compiled
    """An entry's precision, COCO precision, F1 (-inf for NaN) and recall, as the numpy kernels
    write them (:func:`_block_terms`)."""
    tpf = np.float64(tp)
    fpf = np.float64(fp)
    den = tpf + fpf
    f1 = 2.0 * tpf / (den + p)
    return (tpf / den if dense or den > 0 else 0.0, tpf / (fpf + tpf + unit_eps), -np.inf if f1 != f1 else f1,
            tpf / p)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _dg_area(tp, fp, dtp, fp_prev, log_ratio):  # pragma: no cover - compiled
    """Davis & Goadrich's area of a step (``conventions.interpolated_areas``), 0 for no positive gained."""
    tpf = np.float64(tp)
    fpf = np.float64(fp)
    df = np.float64(dtp)
    fa = np.float64(fp_prev)
    slope = (fpf - fa) / df
    c = slope + 1.0
    area = df / c + (slope * (tpf - df) - fa) / c / c * log_ratio
    return area if dtp > 0 else 0.0


@njit(cache=True, nogil=True)
def _tied_steps(fp, fp_prev, k, out):  # pragma: no cover - compiled
    """The steps ``j < k`` that add a negative (``fp[j] != fp_prev[j]``: a positive tied with a negative)
    into ``out``, in order; returns their number.  A vector check first (none, the usual block), then
    one pass with no branch: a few per block cost no mispredicted jumps and no vector loop of their
    formula (which LLVM would run on every lane under a mask)."""
    if _no_negatives(fp, fp_prev, k):
        return 0
    c = 0
    for j in range(k):
        out[np.uint64(c)] = j
        c += fp[j] != fp_prev[j]
    return c


@njit(cache=True, nogil=True, error_model="numpy")
def _block_terms(tp, fp, dtp, fp_prev, i, lo, hi, p, n, o, length, dense, exact, unit_eps, ratio_pn, log_ratio,
                 want_ap, want_ranked, roc_ints, k_prg, terms, base, tied):  # pragma: no cover - compiled
    """The terms of entries ``lo`` to ``hi`` of row ``i`` (:func:`batch_numbers`), each as the numpy
    kernel writes it: precision, COCO precision, F1 (-inf for NaN), the step, trapezoid and
    Davis & Goadrich terms (of steps only), the recall gained (voc2010), the ROC term with
    weights (not with ``roc_ints``) and the PRG trapezoid (the one that crosses recall gain 0 is
    the caller's), and the recall ``TP / P`` (row 9; row 6 is its differences).  Loops without
    branches over zero-based views of the rows, so that the divisions run as vector instructions
    (indices like ``j - lo``, which numba must check for negative values, kept them scalar: 3x slower).
    Entry ``j`` of the row is ``tp[i, j - base]`` (``base``: the first step of a window, else 0)."""
    k = hi - lo
    tpr, fpr, dtpr, fpa = tp[i, lo - base:hi - base], fp[i, lo - base:hi - base], dtp[i, lo - base:hi - base], \
        fp_prev[i, lo - base:hi - base]
    if want_ap:
        t0, t1, t2, t9 = terms[0, :k], terms[1, :k], terms[2, :k], terms[9, :k]
        if hi <= length:
            t3, t4, t5 = terms[3, :k], terms[4, :k], terms[5, :k]
            lr = log_ratio[o + lo:o + hi]
            for j in range(k):
                prec, t1[j], t2[j], t9[j] = _step_terms(tpr[j], fpr[j], p, dense, unit_eps)
                t0[j] = prec
                dj = dtpr[j]
                df = np.float64(dj)
                fa = np.float64(fpa[j])
                t3[j] = df * prec
                tpp = np.float64(tpr[j] - dj)
                ps = tpp + fa
                t4[j] = df * ((tpp / ps if ps > 0 else 1.0) + prec)
            if exact:
                # a step that adds positives only (no negative tied with them): slope 0, c = 1, and the
                # area d / 1 + (0 * a - fa) / 1 / 1 * log is d - fa * log, the same bits without a division
                for j in range(k):
                    dj = dtpr[j]
                    area = np.float64(dj) - np.float64(fpa[j]) * lr[j]
                    t5[j] = area if dj > 0 else 0.0
                for t in range(_tied_steps(fpr, fpa, k, tied)):  # the steps with negatives tied: few
                    j = tied[t]
                    t5[j] = _dg_area(tpr[j], fpr[j], dtpr[j], fpa[j], lr[j])
            else:
                for j in range(k):
                    t5[j] = _dg_area(tpr[j], fpr[j], dtpr[j], fpa[j], lr[j])
        else:
            for j in range(k):
                t0[j], t1[j], t2[j], t9[j] = _step_terms(tpr[j], fpr[j], p, dense, unit_eps)
        t6 = terms[6, :k]
        if k > 0:
            before = np.float64(tpr[0] - dtpr[0]) if lo == base else np.float64(tp[i, lo - 1 - base])
            t6[0] = t9[0] - before / p
        for j in range(1, k):
            t6[j] = t9[j] - t9[j - 1]
    if want_ranked and not roc_ints:  # the ROC term with weights (integer counts add it exactly elsewhere)
        t7 = terms[7, :k]
        for j in range(k):
            df = np.float64(dtpr[j])
            t7[j] = df / p * (np.float64(fpa[j]) / n + np.float64(fpr[j]) / n)
    if want_ranked:  # AUPRG's terms, of the steps from recall gain 0 (``k_prg``) only: no others are read
        skip = min(max(k_prg - lo, 0), k)
        t8 = terms[8, skip:k]
        a0, a1 = lo + skip - base, hi - base
        tpr, fpr, dtpr, fpa = tp[i, a0:a1], fp[i, a0:a1], dtp[i, a0:a1], fp_prev[i, a0:a1]
        for j in range(k - skip):
            tpf = np.float64(tpr[j])
            fpf = np.float64(fpr[j])
            df = np.float64(dtpr[j])
            fa = np.float64(fpa[j])
            a = tpf - df
            rg_a = 1.0 - ratio_pn * (p - a) / a
            pg_a = 1.0 - ratio_pn * fa / a
            rg_b = 1.0 - ratio_pn * (p - tpf) / tpf
            pg_b = 1.0 - ratio_pn * fpf / tpf
            t8[j] = (rg_b - rg_a) * (pg_b + pg_a)


@njit(cache=True, nogil=True)
def _count_below(tp, length, t0):  # pragma: no cover - compiled
    """How many of the first ``length`` counts (increasing) are below ``t0``, as floats."""
    lo, hi = 0, length
    while lo < hi:
        mid = (lo + hi) // 2
        if np.float64(tp[mid]) < t0:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _block_bounds(block, n_leaves, length, r, leaf_starts):  # pragma: no cover - compiled
    """Entries ``lo`` to ``hi`` of block ``block`` of a row (:func:`batch_numbers`): the leaves of
    its steps' sums, then its padding in blocks of ``_TERMS``."""
    if block >= n_leaves:
        lo = length + (block - n_leaves) * _TERMS
        return lo, min(lo + _TERMS, r)
    return leaf_starts[block], leaf_starts[block + 1]


@njit(cache=True, nogil=True, error_model="numpy")  # x / 0 is inf or NaN, as in numpy
def batch_numbers(tp, fp, dtp, fp_prev, n_pos, n_neg, lengths, want_ap, dense, exact, voc_mode, int_scale,
                  reference, grid07, grid101, unit, changed, log_ratio, offsets, want_ranked, roc_ints,
                  sums, points07, points101, best, roc_int, windowed, window):  # pragma: no cover - compiled
    """Every number of ``evaluate`` on a batch of steps, one backward pass a row: the compiled
    twin of the numpy kernels (``evaluation.batch_numbers``' numpy route is its oracle).

    Row ``i`` holds ``r`` entries, its own steps the first ``lengths[i]`` (the rest pads it: a
    ragged batch's padding repeats the last step without a positive gained, which changes no
    number, and is not walked);
    ``voc_mode`` is ``voc2010_sum``'s route (0: one problem, 1: a ragged batch, 2: a batch of
    full rows).  With ``want_ap`` (the steps for ``ties``): ``sums[:, 0:4]`` are ``step_sum``,
    ``trapezoid_sum``, the sum of ``interpolated_areas`` (``log_ratio``: the prepass's ratios
    after ``np.log1p``) and ``voc2010_sum``; ``points07`` / ``points101`` ``grid_precisions``;
    ``best`` the best-F1 step.  With ``want_ranked`` (grouped ties): ``sums[:, 4]`` ``twice_fp_area``
    with weights (``roc_int`` its integer without, when ``roc_ints``) and ``sums[:, 5]`` twice the
    AUPRG.  Each formula as the numpy kernel writes it (:func:`_block_terms`), each sum in numpy's
    pairwise order: the row is walked backwards a leaf of the steps' tree at a time (the sums over
    the steps take each leaf whole; voc2010's recall changes and AUPRG's suffix fill their own
    leaves, last first), the envelopes and grid points read on the way back.

    ``windowed``: one problem's grouped-ties steps held as its sorted label-tagged keys, ``window`` =
    ``(uint32 keys, uint64 keys, k, checkpoints, their count, k_prg, mag)``, one kind of keys empty, so
    that one compiled kernel serves both and the numbers without window (:func:`key_checkpoints`; ``lengths[0]`` its
    steps): ``tp`` ... ``fp_prev`` are then buffers of ``(1, WINDOW)`` that each chunk of steps is
    written into (:func:`key_window`), and ``log_ratio`` one of ``WINDOW`` for their Davis & Goadrich
    ratios, whose ``np.log1p`` numpy takes (:func:`_numpy_log1p`): no array of the steps' size."""
    m, r = tp.shape
    if windowed:
        r = lengths[0]
    n_leaves = (r + 1) // 64 + 2
    starts = np.empty((6, n_leaves + 1), dtype=np.int64)
    cur = np.zeros(6, dtype=np.int64)
    leaf_sums = np.empty((6, n_leaves))
    count = np.zeros(6, dtype=np.int64)
    terms = np.empty((10, _CHUNK))
    tied = np.empty(WINDOW, dtype=np.int64)  # _block_terms' and _dg_ratios' steps with negatives tied
    buf_voc = np.empty(128)
    buf_prg = np.empty(128)
    voc_terms = np.empty(128)
    eps = 2.220446049250313e-16  # np.spacing(1)
    for i in range(m):
        p = n_pos[i]
        n = n_neg[i]
        length = lengths[i]
        voc_stop = length if voc_mode == 1 else r
        n_leaves_row = _leaf_starts(length, starts[0])  # sums 0, 1, 2 and 4 share the tree of the row's steps
        base = 0  # entry j of the row at tp[i, j - base]
        if length == 0:
            for q in (0, 1, 2, 4):
                leaf_sums[q, 0] = -0.0
        if want_ap:
            for q in range(3):
                count[q] = length
            if voc_mode == 2:
                count[3] = r
            else:
                last = (np.float64(tp[i, r - 1]) if not windowed else p) / p if r > 0 else 0.0  # windowed: TP = P
                tail = r == 0 or (voc_mode == 1 and length == 0) or last != 1.0
                count[3] = changed[i] + (1 if tail else 0)
            _start_sum(3, count[3], starts, cur, leaf_sums)
            if voc_mode != 2 and count[3] > changed[i]:  # the (1, 0) sentinel's term
                lo = starts[3, cur[3]]
                buf_voc[changed[i] - lo] = 0.0
                if changed[i] == lo:
                    leaf_sums[3, cur[3]] = _leaf(buf_voc, 0, 1)
                    cur[3] -= 1
        t0 = p * (p / (p + n))
        k_prg = 0
        roc_acc = roc_int[i]
        if want_ranked:
            k_prg = _count_below(tp[i], length, t0) if not windowed else window[5]
            count[4] = 0 if roc_ints else length
            if roc_ints:
                leaf_sums[4, 0] = -0.0  # the sum of no value (roc_int holds the area)
            count[5] = length - k_prg
            _start_sum(5, count[5], starts, cur, leaf_sums)
        ratio_pn = p / n
        unit_eps = eps if exact else eps * unit[i]
        o = offsets[i]
        pos_voc = r - 1 if voc_mode == 2 else changed[i] - 1
        voc_leaf = cur[3]
        voc_lo = starts[3, max(voc_leaf, 0)]
        prg_leaf = cur[5]
        prg_lo = starts[5, max(prg_leaf, 0)]
        env = 0.0  # the envelope at the entry after j (0 past the last: grid_precisions' appended zero)
        env_c = 0.0
        k07 = grid07.shape[0] - 1
        k101 = grid101.shape[0] - 1
        next07 = grid07[k07] if reference else np.float64(k07) * p  # the grid point to pass next
        next101 = grid101[k101] if reference else np.float64(k101) * p
        best_value = -np.inf
        best_k = -1
        # the padding in blocks, then the leaves of the steps; a ragged batch's padding (its last step again,
        # no positive gained) changes no number: not walked after a step
        end = length if voc_mode == 1 and length > 0 else r
        n_blocks = (end - length + _TERMS - 1) // _TERMS
        c_lo = r + 1  # the entries whose terms are in ``terms``: c_lo to c_hi
        for block in range(n_blocks + n_leaves_row - 1, -1, -1):  # last first
            lo, hi = _block_bounds(block, n_leaves_row, length, r, starts[0])
            if lo < c_lo:  # the terms of this block and of the blocks before it, up to _CHUNK entries,
                c_hi = hi  # computed forwards: read backwards a block at a time, the steps defeat
                first = block  # the prefetcher and the pass takes twice as long
                while first != n_leaves_row and first > 0:  # a chunk is steps or padding, not both
                    if c_hi - _block_bounds(first - 1, n_leaves_row, length, r, starts[0])[0] > _CHUNK:
                        break
                    first -= 1
                c_lo = _block_bounds(first, n_leaves_row, length, r, starts[0])[0]
                if windowed:  # the chunk's steps written again from the keys, and their ratios' log1p
                    base = c_lo
                    o = -c_lo
                    if window[0].shape[0] > 0:  # uint32 keys (both kinds in the one compiled kernel)
                        key_window(window[0], window[2], window[3], window[4], c_lo, c_hi, window[6], tp[0], dtp[0],
                                   fp[0], fp_prev[0])
                    else:
                        key_window(window[1], window[2], window[3], window[4], c_lo, c_hi, window[6], tp[0], dtp[0],
                                   fp[0], fp_prev[0])
                    if want_ap:
                        _dg_ratios(tp[0], fp[0], dtp[0], fp_prev[0], log_ratio[:c_hi - c_lo], tied)
                        _numpy_log1p(log_ratio[:c_hi - c_lo])
                _block_terms(tp, fp, dtp, fp_prev, i, c_lo, c_hi, p, n, o, length, dense, exact, unit_eps, ratio_pn,
                             log_ratio, want_ap, want_ranked, roc_ints, k_prg, terms, base, tied)
                if want_ranked and roc_ints:  # integers: any order gives the same sum (a vector loop)
                    dv, av, fv = dtp[i, c_lo - base:c_hi - base], fp_prev[i, c_lo - base:c_hi - base], \
                        fp[i, c_lo - base:c_hi - base]
                    for j in range(c_hi - c_lo):
                        roc_acc += dv[j] * (av[j] + fv[j])
            k_b = hi - lo
            fast = exact and want_ap and block < n_leaves_row and k_b > 0
            if fast and (k07 >= 0 or k101 >= 0):  # no grid point is passed in the leaf (its lowest recall at lo)
                v07, v101 = _grid_values(terms, np.uint64(lo - c_lo), tp, i, lo - base, reference, int_scale)
                fast = (k07 < 0 or v07 >= next07) and (k101 < 0 or v101 >= next101)
            if fast and voc_mode != 2:  # every entry a recall change: voc2010's terms fill consecutive places
                fast = _all_nonzero(terms[6, lo - c_lo:hi - c_lo], k_b)
            if fast:  # the same steps as the loop below, in passes over the leaf (integer counts)
                env, env_c, best_value, best_k = _scan_leaf(terms, lo - c_lo, k_b, end - 1 - lo, lo, env, env_c,
                                                            best_value, best_k, voc_terms)
                voc_leaf, voc_lo = _fill_leaves(voc_terms, k_b, pos_voc, buf_voc, starts[3], voc_leaf, voc_lo,
                                                leaf_sums[3])
                pos_voc -= k_b
                j_lo, j_hi = max(lo, k_prg), min(hi, length)
                if want_ranked and j_lo < j_hi:
                    if j_lo == k_prg:
                        terms[8, np.uint64(k_prg - c_lo)] = _prg_first(tp, fp, dtp, fp_prev, i, k_prg - base, t0, p,
                                                                       ratio_pn, terms[8, np.uint64(k_prg - c_lo)])
                    prg_leaf, prg_lo = _fill_leaves(terms[8, j_lo - c_lo:j_hi - c_lo], j_hi - j_lo, j_hi - 1 - k_prg,
                                                    buf_prg, starts[5], prg_leaf, prg_lo, leaf_sums[5])
            for j in range(hi - 1, lo - 1 if not fast else hi - 1, -1):
                t = np.uint64(j - c_lo)  # unsigned: no check for a negative index
                if want_ap:
                    v07, v101 = _grid_values(terms, t, tp, i, j - base, reference, int_scale)
                    while k07 >= 0 and not v07 >= next07:  # the grid above this recall (NaN: all of it)
                        points07[i, k07] = env
                        k07 -= 1
                        next07 = grid07[max(k07, 0)] if reference else np.float64(k07) * p
                    while k101 >= 0 and not v101 >= next101:
                        points101[i, k101] = env_c
                        k101 -= 1
                        next101 = grid101[max(k101, 0)] if reference else np.float64(k101) * p
                    if j == end - 1:
                        env = terms[0, t]
                        env_c = terms[1, t]
                    else:
                        env = _maximum(env, terms[0, t])
                        env_c = _maximum(env_c, terms[1, t])
                    value = terms[2, t]
                    if value >= best_value:  # backwards: the first among equals
                        best_value = value
                        best_k = j
                    if j < voc_stop:
                        width = terms[6, t]
                        if width != 0 or voc_mode == 2:  # compacted, but for a batch of full rows
                            buf_voc[np.uint64(pos_voc - voc_lo)] = width * env if width != 0 else 0.0
                            if pos_voc == voc_lo:  # the leaf is complete (positions decrease)
                                leaf_sums[3, voc_leaf] = _leaf(buf_voc, 0, starts[3, voc_leaf + 1] - voc_lo)
                                voc_leaf -= 1
                                voc_lo = starts[3, max(voc_leaf, 0)]
                            pos_voc -= 1
                if want_ranked:
                    if k_prg <= j < length:
                        term = terms[8, t]
                        if j == k_prg:
                            term = _prg_first(tp, fp, dtp, fp_prev, i, j - base, t0, p, ratio_pn, term)
                        pos = j - k_prg
                        buf_prg[np.uint64(pos - prg_lo)] = term
                        if pos == prg_lo:
                            leaf_sums[5, prg_leaf] = _leaf(buf_prg, 0, starts[5, prg_leaf + 1] - prg_lo)
                            prg_leaf -= 1
                            prg_lo = starts[5, max(prg_leaf, 0)]
            if block < n_leaves_row:  # a leaf of the steps' sums, summed as numpy sums it
                if want_ap:
                    for q in range(3):
                        leaf_sums[q, block] = _leaf(terms[3 + q], lo - c_lo, hi - lo)
                if want_ranked and not roc_ints:
                    leaf_sums[4, block] = _leaf(terms[7], lo - c_lo, hi - lo)
        if want_ap:
            while k07 >= 0:
                points07[i, k07] = env
                k07 -= 1
            while k101 >= 0:
                points101[i, k101] = env_c
                k101 -= 1
            best[i] = best_k
            for q in range(4):
                sums[i, q] = _tree(leaf_sums[q], count[q])
        if want_ranked:
            roc_int[i] = roc_acc
            for q in range(4, 6):
                sums[i, q] = _tree(leaf_sums[q], count[q])
