"""Coverage of the per-slice intervals of precall.stats.compare_slices, by simulation.

Binormal slices (negatives N(0, 1), positives N(d, 1)): the true ROC-AUC is Phi(d / sqrt(2)); the true
AP (step) of a slice's population is taken from 4e6 rows of it.  Each replicate draws every slice anew
and asks whether its 95% intervals (AP: bootstrap; ROC-AUC: DeLong) contain the truth.

    python benchmarks/sim_slice_coverage.py [replicates] [n_resamples]     (default 200 500)
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

import precall
from precall import stats

SLICES = [("small", 150, 0.3, 1.0), ("medium", 1000, 0.2, 1.5), ("large", 5000, 0.1, 0.8)]  # name, n, prev, d


def _draw(rng, n, prevalence, d):
    y = (rng.random(n) < prevalence).astype(int)
    return y, rng.standard_normal(n) + d * y


def main(replicates: int, n_resamples: int) -> None:
    rng = np.random.default_rng(12345)
    truth_ap = {name: precall.average_precision(*_draw(rng, 4_000_000, p, d)) for name, _, p, d in SLICES}
    truth_auc = {name: 0.5 * math.erfc(-d / 2.0) for name, _, _, d in SLICES}  # Phi(d / sqrt 2)
    hits = {name: [0, 0] for name, *_ in SLICES}
    t = time.perf_counter()
    for r in range(replicates):
        parts = [_draw(rng, n, p, d) for _, n, p, d in SLICES]
        y = np.concatenate([a for a, _ in parts])
        s = np.concatenate([b for _, b in parts])
        g = np.repeat([name for name, *_ in SLICES], [n for _, n, _, _ in SLICES])
        c = stats.compare_slices(y, s, by=g, n_resamples=n_resamples, random_state=r)
        for name, *_ in SLICES:
            i = c.index(name)
            hits[name][0] += bool(c.ap_low[i] <= truth_ap[name] <= c.ap_high[i])
            hits[name][1] += bool(c.auc_low[i] <= truth_auc[name] <= c.auc_high[i])
    print(f"{replicates} replicates, {n_resamples} resamples, 95% intervals ({time.perf_counter() - t:.0f}s)")
    se = math.sqrt(0.95 * 0.05 / replicates)
    for name, n, p, d in SLICES:
        ap_cov, auc_cov = (h / replicates for h in hits[name])
        print(f"  {name:<6} n={n:<5} prevalence={p:<4} d={d:<4} AP (step) {truth_ap[name]:.4f}: coverage "
              f"{ap_cov:.3f}; ROC-AUC {truth_auc[name]:.4f}: coverage {auc_cov:.3f}  (MC SE {se:.3f})")


if __name__ == "__main__":
    args = [int(float(a)) for a in sys.argv[1:]]
    main(*(args + [200, 500][len(args):]))
