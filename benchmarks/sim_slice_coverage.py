"""Coverage of the per-slice intervals of precall.stats.compare_slices, by simulation, and of the
other bootstrap interval designs on the same replicates.

Binormal slices (negatives N(0, 1), positives N(d, 1)): the true ROC-AUC is Phi(d / sqrt(2)); the true
AP (step) of a slice's population is taken from 4e6 rows of it.  Each replicate draws every slice anew.
For each slice, one bootstrap of its rows with the seed and strata ``compare_slices`` gives it
(``stats.slice_seed(r, i)``; the slice's rows one stratum, classes together): its replicates give the
percentile interval (compare_slices' own, bit for bit), the BCa interval (``stats.bootstrap_ci(method="bca")``, whose replicates are the same draws), the
basic interval ``[2 est - q_hi, 2 est - q_lo]`` and the bias-corrected one
(:func:`precall.detection.bootstrap.interval_from_replicates`); ROC-AUC gets DeLong's interval.
Reported per slice and design: coverage of the true value and mean width; the estimator's mean bias
and the bootstrap's mean estimate of it; the estimator's SD over the replicates and the bootstrap's
mean estimate of it (``BootstrapResult.standard_error``).

With a third argument ``stratified``, each slice also gets the percentile interval of a bootstrap
stratified by class (``stratified=True``: the slice's positive count held fixed, as
``compare_slices(stratified=True)`` draws it), reported as "stratified percentile".

    python benchmarks/sim_slice_coverage.py [replicates] [n_resamples] [stratified]     (default 200 500)

With ``overall`` (or ``overall-weighted``) instead, ``stats.compare_slices(reference="overall")`` is
checked: each data set's slices are compared with all rows (AP by the joint bootstrap of the slice's and
the rest's rows, ROC-AUC by DeLong's variance of the difference with the shared cases; with
``overall-weighted`` every row weighs 1, so both are the joint bootstrap of rows carrying weights). Two
scenarios: *null*, every slice drawn from one distribution (prevalence 0.2, d = 1.0; the slices of
``SLICES``' sizes; the true difference 0), where the share of p-values below 0.05 is the test's size (5%
is right; Holm's family-wise rate below it), and *alternative*, the slices of ``SLICES``, where each
difference's 95% interval is checked against the true difference (the slice's population value minus
that of the mixture of the slices in proportion to their sizes, each from 4e6 rows) and the rejection
rate is the power. ``overall-fixed`` runs the null scenario with every slice's positive count fixed
(``round(prevalence n)``), the counts a bootstrap stratified by class holds fixed.  ``rest`` (with the
same suffixes) compares each slice with the rest of the rows instead (``reference="rest"``); a further
``-stratified`` passes ``stratified=True`` (each class of each slice resampled apart).

    python benchmarks/sim_slice_coverage.py [replicates] [n_resamples] {overall|rest}[-weighted][-fixed][-stratified]
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


def _draw(rng, n, prevalence, d, fixed=False):
    """n rows, each positive with the prevalence (``fixed``: exactly round(prevalence n) positives)."""
    if fixed:
        y = (rng.permutation(n) < round(prevalence * n)).astype(int)
    else:
        y = (rng.random(n) < prevalence).astype(int)
    return y, rng.standard_normal(n) + d * y


def main(replicates: int, n_resamples: int, stratified: bool = False) -> None:
    methods = METHODS + (("stratified percentile",) if stratified else ())
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
                                        stratified=False, random_state=stats.slice_seed(r, order.index(name)))
            est, reps = ci.estimate, ci.replicates
            bounds = {"bca": (ci.low, ci.high)}
            for m in ("percentile", "basic", "bias-corrected"):
                bounds[m] = interval_from_replicates(est, reps, 0.95, m)
            if stratified:
                held = stats.bootstrap_ci(precall.average_precision, y, s, n_resamples=n_resamples, stratified=True,
                                          random_state=stats.slice_seed(r, order.index(name)))
                bounds["stratified percentile"] = (held.low, held.high)
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


NULL = [(name, n, 0.2, 1.0) for name, n, _, _ in SLICES]  # every slice the same distribution


def _mixture(rng, slices, n):
    """``n`` rows of the mixture of the slices in proportion to their sizes."""
    total = sum(size for _, size, _, _ in slices)
    parts = [_draw(rng, round(n * size / total), p, d) for _, size, p, d in slices]
    return np.concatenate([y for y, _ in parts]), np.concatenate([s for _, s in parts])


def main_overall(replicates: int, n_resamples: int, weighted: bool = False, fixed: bool = False,
                 reference: str = "overall", stratified: bool = False) -> None:
    """Size (null) and coverage and power (alternative) of compare_slices(reference=...);
    ``fixed``: every data set's slices have the same positive counts (what a bootstrap stratified
    by class holds fixed), the null scenario only."""
    rng = np.random.default_rng(2024)
    order = sorted(name for name, *_ in SLICES)
    print(f"# Python {sys.version.split()[0]}, {platform.machine()}; {replicates} replicates, {n_resamples} "
          f"resamples, {'weights of one (joint bootstrap of rows for both)' if weighted else 'unweighted'}; MC SE "
          f"of a rate near 0.05: {math.sqrt(0.05 * 0.95 / replicates):.3f}, near 0.95 the same"
          + ("; every slice's positive count fixed" if fixed else "")
          + f"; reference={reference!r}, stratified={stratified}")
    for scenario, slices in (("null", NULL),) + ((("alternative", SLICES),) if not fixed else ()):
        true_diff = {name: (0.0, 0.0) for name, *_ in slices}  # null: the mixture is each slice's distribution
        if scenario == "alternative":
            truth = {}
            for name, _, p, d in slices:
                others = [x for x in slices if x[0] != name] if reference == "rest" else slices
                ys, ss = _mixture(rng, others, 4_000_000)
                y, s = _draw(rng, 4_000_000, p, d)
                truth[name] = (precall.average_precision(y, s) - precall.average_precision(ys, ss),
                               0.5 * math.erfc(-d / 2.0) - precall.roc_auc(ys, ss))
            true_diff = truth
        reject = {name: [[], []] for name in order}
        cover = {name: [[], []] for name in order}
        family = [[], []]
        diffs = {name: [[], []] for name in order}
        t = time.perf_counter()
        for r in range(replicates):
            parts = [_draw(rng, n, p, d, fixed) for _, n, p, d in slices]
            y = np.concatenate([a for a, _ in parts])
            s = np.concatenate([b for _, b in parts])
            g = np.repeat([name for name, *_ in slices], [n for _, n, _, _ in slices])
            c = stats.compare_slices(y, s, by=g, n_resamples=n_resamples, random_state=r, reference=reference,
                                     sample_weight=np.ones(y.shape[0]) if weighted else None, stratified=stratified)
            for k, (p_holm, test) in enumerate(((c.ap_p_holm, "ap"), (c.auc_p_holm, "auc"))):
                family[k].append(bool(np.nanmin(p_holm) < 0.05))
            for i, name in enumerate(c.names):
                pair = c.vs_reference[i]
                for k, (p, lo, hi, est) in enumerate(((pair.ap_p_value, pair.ap_difference_low, pair.ap_difference_high,
                                                       pair.ap_difference),
                                                      (pair.auc_p_value, pair.auc_difference_low,
                                                       pair.auc_difference_high, pair.auc_difference))):
                    reject[name][k].append(bool(p < 0.05))
                    cover[name][k].append(bool(lo <= true_diff[name][k] <= hi))
                    diffs[name][k].append(est)
        print(f"\n{scenario} ({time.perf_counter() - t:.0f}s): " + ", ".join(
            f"{name} n={n} prevalence {p} d={d}" for name, n, p, d in slices)
              + f"; Holm family-wise rejection AP {np.mean(family[0]):.3f}, ROC-AUC {np.mean(family[1]):.3f}")
        ref = "all" if reference == "overall" else reference
        header = ["slice", f"true AP - {ref}", f"mean AP - {ref}", "AP reject", "AP cover", f"true AUC - {ref}",
                  f"mean AUC - {ref}", "AUC reject", "AUC cover"]
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for name, n, _, _ in slices:
            cells = [f"{name} (n={n})"]
            for k in (0, 1):
                cells += [f"{true_diff[name][k]:+.4f}", f"{np.mean(diffs[name][k]):+.4f}",
                          f"{np.mean(reject[name][k]):.3f}", f"{np.mean(cover[name][k]):.3f}"]
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    numbers = [int(float(a)) for a in sys.argv[1:3]]
    mode = sys.argv[3:4]
    if mode and mode[0].startswith(("overall", "rest")):
        main_overall(*(numbers + [200, 500][len(numbers):]), weighted="weighted" in mode[0],
                     fixed="fixed" in mode[0], reference=mode[0].split("-")[0], stratified="-stratified" in mode[0])
    else:
        main(*(numbers + [200, 500][len(numbers):]), stratified=mode == ["stratified"])
