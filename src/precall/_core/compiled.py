"""The compiled passes of the one sort (numba, the optional ``fast`` extra; imported lazily).

Loaded only through :func:`precall._core.backend.compiled`; nothing else imports numba.
Each pass gives exactly the numbers of the numpy route it replaces (the same integer
counts, the same float64 additions in the same order), so the choice of kernel never
changes a bit; ``tests/test_compiled.py`` checks that on random input.

* :func:`tag_floats` / :func:`tag_ints` write the *label-tagged keys*: the bits of
  ``|score|`` shifted left by one with the label in the low bit, the non-negative
  scores at the front of the key array and the negative ones at the back.  Each part
  is then sorted with one ``np.sort`` (of uint32 keys for scores of at most 32 bits, so
  the sort is as fast as the sort of the scores themselves), and
* :func:`tagged_steps` walks the two parts in decreasing score order once and writes
  the steps (grouped ties, or stable ties when no score is shared by both classes).
* :func:`ranked_steps` walks keys ``score_key << shift | index`` sorted increasingly
  (:func:`precall._core.sort.sorted_index_keys`): it restores the exact order where
  truncated keys collide, gathers labels and weights, accumulates TP and FP in that
  order (scikit-learn's sequential ``cumsum``) and writes only the steps.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["ranked_steps", "tag_floats", "tag_ints", "tagged_steps"]


@njit(cache=True, nogil=True)
def tag_floats(bits, positive, key, sign_mask):  # pragma: no cover - compiled
    """Label-tagged keys of IEEE scores given as signed integers ``bits``.

    Non-negative scores fill ``key`` from the front, negative ones from the back.
    Returns ``(k, ok)``: ``k`` non-negative keys; ``ok`` is False when a score is
    ``-0.0`` (equal to ``+0.0`` but not of its bits: the caller takes the numpy route).
    """
    n = bits.shape[0]
    front = 0
    back = n
    for i in range(n):
        b = bits[i]
        y = positive[i]
        if b < 0:
            mag = b & sign_mask
            if mag == 0:
                return front, False
            back -= 1
            key[back] = (mag << 1) | y
        else:
            key[front] = (b << 1) | y
            front += 1
    return front, True


@njit(cache=True, nogil=True)
def tag_ints(values, positive, key):  # pragma: no cover - compiled
    """Label-tagged keys of integer scores (at most 32 bits): as :func:`tag_floats`,
    ``|value|`` in place of the magnitude bits.  Returns the number of non-negative keys."""
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
def tagged_steps(key, k, stable, mag, tp, dtp, fp, fp_prev):  # pragma: no cover - compiled
    """The steps of label-tagged keys: ``key[:k]`` (non-negative scores) and ``key[k:]``
    (negative scores, by magnitude) each sorted increasingly.

    Position ``i`` of the decreasing order is ``key[k - 1 - i]`` for ``i < k``, else
    ``key[i]``.  Writes, per step, the magnitude bits of its score and its counts.
    Returns ``(steps, steps_of_non_negative_scores)``, or ``(-1, 0)`` for stable ties
    when a score is shared by both classes (their input order then matters).
    """
    n = key.shape[0]
    one = np.uint64(1)
    cum_pos = 0
    cum_neg = 0
    j = 0
    j_front = 0
    i = 0
    while i < n:
        if i == k:
            j_front = j
        idx = k - 1 - i if i < k else i
        v = key[idx] >> one
        run_pos = 0
        run_len = 0
        while True:
            run_pos += np.int64(key[idx] & one)
            run_len += 1
            i += 1
            if i >= n or i == k:
                break
            idx = k - 1 - i if i < k else i
            if key[idx] >> one != v:
                break
        run_neg = run_len - run_pos
        if run_pos:
            if not stable:
                mag[j] = v
                tp[j] = cum_pos + run_pos
                dtp[j] = run_pos
                fp[j] = cum_neg + run_neg
                fp_prev[j] = cum_neg
                j += 1
            elif run_neg:
                return -1, 0
            else:
                for r in range(run_pos):
                    mag[j] = v
                    tp[j] = cum_pos + r + 1
                    dtp[j] = 1
                    fp[j] = cum_neg
                    fp_prev[j] = cum_neg
                    j += 1
        cum_pos += run_pos
        cum_neg += run_neg
    if k == n:
        j_front = j
    return j, j_front


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


@njit(cache=True, nogil=True)
def ranked_steps(key, shift, exact_key, scores, positive, weight, weighted, stable,
                 rows, tp, dtp, fp, fp_prev):  # pragma: no cover - compiled
    """The steps of keys ``score_key << shift | index`` sorted increasingly (decreasing
    scores, equal keys in input order).

    Where the keys are truncated (``exact_key`` False) and neighbours share a key but not
    a score, the group is first re-sorted exactly (:func:`_exact_groups`).  Then, block by
    block, the labels and weights are gathered (a loop without branches, so the loads
    overlap) and TP and FP add ``t = w if positive else 0`` and ``w - t`` (``w`` = 1.0
    without ``weighted``) in that order, as the numpy route's ``np.cumsum`` does.  A step
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
    tp_c = 0.0
    fp_c = 0.0
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
            tp_c += d
            fp_c += w - d
            any_pos = any_pos or yb[t]
            if not stable and i + 1 < n and key[i + 1] >> ushift == key[i] >> ushift:  # each sample a run: stable
                if exact_key or scores[np.int64(key[i + 1] & low)] == scores[idx[t]]:
                    continue  # the run goes on
            if any_pos:
                rows[j] = i
                tp[j] = tp_c
                dtp[j] = tp_c - tp_above
                fp[j] = fp_c
                fp_prev[j] = fp_above
                j += 1
            tp_above = tp_c
            fp_above = fp_c
            any_pos = False
        for t in range(m):
            key[start + t] = np.uint64(idx[t])
    return j, tp_c, fp_c
