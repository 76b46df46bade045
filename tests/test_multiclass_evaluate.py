"""The library's multi-class / multi-label ``precall.evaluate`` (a ``MultiEvaluation``).

It computes every number from one sort per column (micro from the merged
per-class halves, one-vs-one from running class counts), so each number is
checked against a path that shares none of that: the binary ``evaluate`` of
each column, the averaged metric functions (``average_precision`` /
``roc_auc`` with ``average=`` / ``multi_class="ovo"``), a brute-force
Hand & Till from pairwise binary AUCs, and scikit-learn.  Inputs have ties,
both tie rules, weights and ``labels`` naming absent classes.
"""

from __future__ import annotations

import warnings
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

import precall

METHODS = tuple(precall.AP_METHODS)


def _case(seed: int, multilabel: bool, weighted: bool, tied: bool):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2 if multilabel else 3, 6))  # 2 labels in 2 columns would be binary input
    n = int(rng.integers(k + 1, 80))
    s = rng.integers(0, 4, (n, k)).astype(float) if tied else rng.random((n, k))
    if seed % 3 == 0:  # negative scores, and -0.0 beside 0.0 (equal scores with other bits)
        s = s - 2.0 if tied else s - 0.5
        s[rng.random((n, k)) < 0.2] = 0.0
        s[rng.random((n, k)) < 0.2] = -0.0
    if multilabel:
        y = (rng.random((n, k)) < 0.4).astype(int)
        y[0] = 1  # at least one positive per column
        y[-1] = 0  # and one negative
    else:
        y = rng.integers(0, k, n)
        y[:k] = np.arange(k)  # every class present
    w = rng.random(n) + 0.1 if weighted else None
    return y, s, w


def _same(a: float, b: float) -> bool:
    return (np.isnan(a) and np.isnan(b)) or a == b


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), multilabel=st.booleans(), weighted=st.booleans(), tied=st.booleans(),
       ties=st.sampled_from(["group", "stable"]))
def test_every_number_equals_the_single_metric_functions(seed, multilabel, weighted, tied, ties):
    y, s, w = _case(seed, multilabel, weighted, tied)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = precall.evaluate(y, s, sample_weight=w, ties=ties)
        assert isinstance(ev, precall.MultiEvaluation)
        k = s.shape[1]
        for c in range(k):
            col = y[:, c] if multilabel else (y == ev.classes[c]).astype(int)
            one = precall.evaluate(col, s[:, c], sample_weight=w, ties=ties)
            got = ev.per_class[c]
            for m in METHODS:
                assert _same(got.average_precision[m], one.average_precision[m]), (c, m)
            assert _same(got.roc_auc, one.roc_auc)
            assert got.best_f1 == one.best_f1
        for average in ("macro", "weighted", "micro"):
            for m in METHODS:
                expected = precall.average_precision(y, s, sample_weight=w, ties=ties, method=m, average=average)
                assert _same(ev.average_precision[average][m], expected), (average, m)
            assert _same(ev.roc_auc[average], precall.roc_auc(y, s, sample_weight=w, average=average))
        if not multilabel:
            ovo = precall.roc_auc(y, s, sample_weight=w, multi_class="ovo")
            assert _same(ev.roc_auc["ovo"], ovo)
        else:
            assert "ovo" not in ev.roc_auc


def _hand_till_brute(y: np.ndarray, s: np.ndarray, classes: np.ndarray) -> float:
    """Hand & Till from pairwise binary AUCs counted pair by pair (ties count 1/2)."""
    pairs = []
    for i, j in combinations(range(len(classes)), 2):
        a, b = y == classes[i], y == classes[j]
        if not (a.any() and b.any()):
            continue
        aucs = []
        for col, pos, neg in ((i, a, b), (j, b, a)):
            d = s[pos, col][:, None] - s[neg, col][None, :]
            aucs.append(((d > 0).sum() + 0.5 * (d == 0).sum()) / d.size)
        pairs.append(sum(aucs) / 2)
    return float(np.mean(pairs))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("tied", [False, True])
def test_ovo_and_micro_against_brute_force_and_sklearn(seed, tied):
    y, s, _ = _case(seed, False, False, tied)
    ev = precall.evaluate(y, s)
    assert ev.roc_auc["ovo"] == pytest.approx(_hand_till_brute(y, s, ev.classes), rel=1e-13, abs=1e-15)
    proba = s / s.sum(axis=1, keepdims=True) if (s.sum(axis=1) > 0).all() else None
    if proba is not None:  # scikit-learn's one-vs-one needs probabilities (rows summing to 1)
        ev_p = precall.evaluate(y, proba)
        assert ev_p.roc_auc["ovo"] == pytest.approx(skm.roc_auc_score(y, proba, multi_class="ovo"), abs=1e-12)
    onehot = (y[:, None] == ev.classes[None, :]).astype(int)
    assert ev.average_precision["micro"]["step"] == pytest.approx(
        skm.average_precision_score(onehot, s, average="micro"), abs=1e-12)
    assert ev.roc_auc["micro"] == pytest.approx(skm.roc_auc_score(onehot, s, average="micro"), abs=1e-12)


def test_labels_naming_an_absent_class():
    y = np.array([0, 1, 1, 0, 2, 2, 1])
    s = np.random.default_rng(3).random((7, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = precall.evaluate(y, s, labels=[0, 1, 2, 3])
        assert ev.roc_auc["ovo"] == pytest.approx(_hand_till_brute(y, s, np.arange(4)), rel=1e-13)
        assert ev.roc_auc["ovo"] == precall.roc_auc(y, s, labels=[0, 1, 2, 3], multi_class="ovo")
        assert ev.per_class[3].n_pos == 0
