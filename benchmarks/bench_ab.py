"""A/B timing of precall's key paths, to compare two versions of precall on one machine.

Run it once per version in separate processes, alternating, e.g.
``PYTHONPATH=old/src python benchmarks/bench_ab.py > old.json`` and
``PYTHONPATH=src python benchmarks/bench_ab.py > new.json`` (twice each), and
compare the minimum times per case: it prints one JSON object of the best time
of each case (seconds).
"""
import json, sys, time
import numpy as np
import precall
rng = np.random.default_rng(0)
out = {}
def t(name, f, r=5):
    best = 1e9
    for _ in range(r):
        t0 = time.perf_counter(); f(); best = min(best, time.perf_counter() - t0)
    out[name] = best
n = 10**6
y = rng.random(n) < 0.1
s = 1 / (1 + np.exp(-(rng.normal(size=n) + 1.5 * y - 1)))
sr = np.round(s, 3)
w = rng.uniform(0.5, 2, n)
t("ap", lambda: precall.average_precision(y, s))
t("ap_rounded", lambda: precall.average_precision(y, sr))
t("roc", lambda: precall.roc_auc(y, s))
t("evaluate", lambda: precall.evaluate(y, s))
t("ap_weighted", lambda: precall.average_precision(y, s, sample_weight=w))
t("roc_weighted", lambda: precall.roc_auc(y, s, sample_weight=w))
t("ap_stable", lambda: precall.average_precision(y, sr, ties="stable"))
t("roc_partial", lambda: precall.roc_auc(y, s, max_fpr=0.1))
k = 10; nm = 200_000
yc = rng.integers(0, k, nm); sc = rng.random((nm, k)); sc[np.arange(nm), yc] += 0.3
t("mc_macro_ap", lambda: precall.average_precision(yc, sc), 3)
t("mc_ovo", lambda: precall.roc_auc(yc, sc, multi_class="ovo"), 3)
Y = (rng.random((20000, 50)) < 0.1).astype(np.int8); S = rng.random((20000, 50))
t("samples_ap", lambda: precall.average_precision(Y, S, average="samples"), 3)
from precall import stats
yb, sb = y[:100000], s[:100000]
t("bootstrap_500", lambda: stats.bootstrap_ci("average_precision", yb, sb, n_resamples=500, random_state=0), 2)
t("delong_ci", lambda: stats.roc_auc_ci(y, s), 3)
acc_y, acc_s = y.astype(int), s.astype(np.float32)
t("accumulator", lambda: precall.Accumulator().update(acc_y, acc_s).evaluate(), 3)
print(json.dumps(out))
