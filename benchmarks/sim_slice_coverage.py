"""Coverage of the per-slice intervals of precall.stats.compare_slices, by simulation, and of the
other bootstrap interval designs on the same replicates.

Binormal slices (negatives N(0, 1), positives N(d, 1)): the true ROC-AUC is Phi(d / sqrt(2)); the true
AP (step) of a slice's population is taken from 4e6 rows of it.  Each replicate draws every slice anew.
For each slice, one stratified bootstrap of its rows with the seed ``compare_slices`` gives it
(``stats.slice_seed(r, i)``): its replicates give the percentile interval (compare_slices' own, bit for
bit), the BCa interval (``stats.bootstrap_ci(method="bca")``, whose replicates are the same draws), the
basic interval ``[2 est - q_hi, 2 est - q_lo]`` and the bias-corrected one
(:func:`precall.detection.bootstrap.interval_from_replicates`); ROC-AUC gets DeLong's interval.
Reported per slice and design: coverage of the true value and mean width; the estimator's mean bias
and the bootstrap's mean estimate of it; the estimator's SD over the replicates and the bootstrap's
mean estimate of it (``BootstrapResult.standard_error``).

With a third argument ``unstratified``, each slice also gets the percentile interval of a bootstrap
that is not stratified by class (``stratified=False``: the slice's positive count varies across
resamples as it does across the simulated data sets), reported as "unstratified percentile".

    python benchmarks/sim_slice_coverage.py [replicates] [n_resamples] [unstratified]     (default 200 500)
"""

from __future__ import annotations

import math
import platform
import sys
import time
import warnings

import numpy as np

import precall
from precall import stats
from precall.detection.bootstrap import interval_from_replicates

SLICES = [("small", 150, 0.3, 1.0), ("medium", 1000, 0.2, 1.5), ("large", 5000, 0.1, 0.8)]  # name, n, prev, d
METHODS = ("percentile", "bca", "basic", "bias-corrected")


def _draw(rng, n, prevalence, d):
    y = (rng.random(n) < prevalence).astype(int)
    return y, rng.standard_normal(n) + d * y


def main(replicates: int, n_resamples: int, unstratified: bool = False) -> None:
    methods = METHODS + (("unstratified percentile",) if unstratified else ())
    rng = np.random.default_rng(12345)
    truth_ap = {name: precall.average_precision(*_draw(rng, 4_000_000, p, d)) for name, _, p, d in SLICES}
    truth_auc = {name: 0.5 * math.erfc(-d / 2.0) for name, _, _, d in SLICES}  # Phi(d / sqrt 2)
    order = sorted(name for name, *_ in SLICES)  # compare_slices' slice order (by value): the seeds' indices
    cover = {name: {m: [] for m in (*methods, "delong")} for name, *_ in SLICES}
    width = {name: {m: [] for m in methods} for name, *_ in SLICES}
    bias = {name: [] for name, *_ in SLICES}
    boot_bias = {name: [] for name, *_ in SLICES}
    estimates = {name: [] for name, *_ in SLICES}
    boot_sd = {name: [] for name, *_ in SLICES}
    t = time.perf_counter()
    for r in range(replicates):
        parts = [_draw(rng, n, p, d) for _, n, p, d in SLICES]
        for (name, *_), (y, s) in zip(SLICES, parts):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # BCa undefined: NaN bounds, counted as a miss
                ci = stats.bootstrap_ci(precall.average_precision, y, s, n_resamples=n_resamples, method="bca",
                                        random_state=stats.slice_seed(r, order.index(name)))
            est, reps = ci.estimate, ci.replicates
            bounds = {"bca": (ci.low, ci.high)}
            for m in ("percentile", "basic", "bias-corrected"):
                bounds[m] = interval_from_replicates(est, reps, 0.95, m)
            if unstratified:
                free = stats.bootstrap_ci(precall.average_precision, y, s, n_resamples=n_resamples, stratified=False,
                                          random_state=stats.slice_seed(r, order.index(name)))
                bounds["unstratified percentile"] = (free.low, free.high)
            for m, (lo, hi) in bounds.items():
                cover[name][m].append(bool(lo <= truth_ap[name] <= hi))
                width[name][m].append(hi - lo)
            bias[name].append(est - truth_ap[name])
            boot_bias[name].append(float(np.mean(reps)) - est)
            estimates[name].append(est)
            boot_sd[name].append(ci.standard_error)
            auc = stats.roc_auc_ci(y, s)
            cover[name]["delong"].append(bool(auc.low <= truth_auc[name] <= auc.high))
    print(f"# Python {sys.version.split()[0]}, {platform.machine()}; {replicates} replicates, {n_resamples} "
          f"resamples, 95% intervals ({time.perf_counter() - t:.0f}s); MC SE of a coverage near 0.95: "
          f"{math.sqrt(0.95 * 0.05 / replicates):.3f}")
    header = ["slice", "true AP", "bias", "boot bias", "SD", "boot SD", *(f"{m} cover / width" for m in methods),
              "ROC-AUC DeLong"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, n, p, d in SLICES:
        cells = [f"{name} (n={n}, prevalence {p}, d={d})", f"{truth_ap[name]:.4f}", f"{np.mean(bias[name]):+.4f}",
                 f"{np.mean(boot_bias[name]):+.4f}", f"{np.std(estimates[name], ddof=1):.4f}",
                 f"{np.mean(boot_sd[name]):.4f}"]
        cells += [f"{np.mean(cover[name][m]):.3f} / {np.nanmean(width[name][m]):.3f}" for m in methods]
        cells.append(f"{np.mean(cover[name]['delong']):.3f}")
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    numbers = [int(float(a)) for a in sys.argv[1:3]]
    main(*(numbers + [200, 500][len(numbers):]), unstratified=sys.argv[3:4] == ["unstratified"])
