"""Coverage of ``precall.stats.bootstrap_ci`` for step AP at small positive counts (issue 24, item 4).

A binormal population (negatives N(0, 1), positives N(``--shift``, 1), prevalence ``--prevalence``)
has the step AP ``integral of precision d recall`` = ``int_0^1 pi r / (pi r + (1 - pi) FPR(t(r))) dr``
(computed on a fine grid of thresholds).  Test sets of ``n_pos`` positives and ``n_pos (1 - pi) / pi``
negatives are drawn; each gets the stratified bootstrap interval of ``precall.stats.bootstrap_ci``
(``percentile``, the default, and ``bca``), and the ``basic`` and ``bias-corrected`` intervals from
the same replicates (:func:`precall.detection.bootstrap.interval_from_replicates`).  Reported: the
estimator's mean bias, the bootstrap's mean bias estimate, each design's coverage of the population
AP and mean width.

    python benchmarks/sim_ap_coverage.py [--sets 300] [--resamples 1000] [--positives 10 20 50]
"""

from __future__ import annotations

import argparse
import platform
import sys
import warnings

import numpy as np
from scipy.stats import norm

import precall
from precall import stats
from precall.detection.bootstrap import interval_from_replicates


def population_ap(shift: float, prevalence: float) -> float:
    t = np.linspace(shift + 9, -9, 2_000_001)  # thresholds, decreasing: recall increasing
    recall, fpr = norm.sf(t - shift), norm.sf(t)
    precision = prevalence * recall / (prevalence * recall + (1 - prevalence) * fpr)
    return float(np.sum(np.diff(recall) * precision[1:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--positives", type=int, nargs="+", default=[10, 20, 50])
    parser.add_argument("--sets", type=int, default=300)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--shift", type=float, default=1.5)
    parser.add_argument("--prevalence", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    truth = population_ap(args.shift, args.prevalence)
    print(f"# Python {sys.version.split()[0]}, {platform.machine()}; binormal shift {args.shift}, prevalence "
          f"{args.prevalence}: population step AP {truth:.4f}; {args.sets} test sets, {args.resamples} resamples")
    methods = ("percentile", "bca", "basic", "bias-corrected")
    header = ["positives", "bias", "boot bias"] + [f"{m} cover / width" for m in methods]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    rng = np.random.default_rng(args.seed)
    for n_pos in args.positives:
        n_neg = int(round(n_pos * (1 - args.prevalence) / args.prevalence))
        bias, boot_bias = [], []
        cover = {m: [] for m in methods}
        width = {m: [] for m in methods}
        for _ in range(args.sets):
            y = np.r_[np.ones(n_pos, int), np.zeros(n_neg, int)]
            s = np.r_[rng.normal(args.shift, 1, n_pos), rng.normal(0, 1, n_neg)]
            est = precall.average_precision(y, s)
            seed = int(rng.integers(2**31))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # BCa undefined: NaN bounds, counted as a miss
                results = {m: stats.bootstrap_ci(precall.average_precision, y, s, n_resamples=args.resamples,
                                                 method=m, random_state=seed) for m in ("percentile", "bca")}
            reps = results["percentile"].replicates
            bias.append(est - truth)
            boot_bias.append(float(np.mean(reps)) - est)
            bounds = {m: (results[m].low, results[m].high) for m in ("percentile", "bca")}
            for m in ("basic", "bias-corrected"):
                bounds[m] = interval_from_replicates(est, reps, 0.95, m)
            for m, (lo, hi) in bounds.items():
                cover[m].append(lo <= truth <= hi)
                width[m].append(hi - lo)
        cells = [str(n_pos), f"{np.mean(bias):+.4f}", f"{np.mean(boot_bias):+.4f}"]
        cells += [f"{100 * np.mean(cover[m]):.1f}% / {np.nanmean(width[m]):.3f}" for m in methods]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
