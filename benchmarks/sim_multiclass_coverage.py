"""Coverage of the multi-class intervals (issue 27, item 3): rows drawn, each class column counted
over score blocks, replicates shifted onto the exact estimate.

A population of ``k`` equally frequent classes: the logits are N(0, 1) with ``--shift`` added to
the true class's, the scores their softmax.  Its macro AP (every convention) and macro one-vs-rest
ROC-AUC are taken from one sample of ``--population`` rows (their bootstrap SD there is given: it
bounds the error of the "truth").  Test sets of ``n`` rows with exactly ``n / k`` rows of each
class (the stratified bootstrap's target holds the class counts fixed) get 95% percentile
intervals from ``precall.stats.bootstrap_cis`` (the metrics ``precall evaluate --class-columns
--ci`` prints), by two designs on the same draws: ``resample="rows"`` (exact) and the default
``"auto"`` with ``--max-cells`` (256: each column counted over at most 2,048 score blocks, coarser
than the default's 3,276 at 10 classes).  Reported: coverage of the population value (binomial
Monte Carlo SE), mean width, and the share of sets where each design's bound is the other's within
a tenth of the width.

    python benchmarks/sim_multiclass_coverage.py [--sets 200] [--resamples 1000] [--sizes 10000 50000]
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import sys
import time

import numpy as np

import precall
from precall import stats


def sample(rng: np.random.Generator, n: int, k: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    y = np.repeat(np.arange(k), n // k)
    rng.shuffle(y)
    logits = rng.normal(size=(y.shape[0], k))
    logits[np.arange(y.shape[0]), y] += shift
    scores = np.exp(logits - logits.max(axis=1, keepdims=True))
    return y, scores / scores.sum(axis=1, keepdims=True)


def metrics() -> list:
    return ([functools.partial(precall.average_precision, method=m, average="macro") for m in precall.AP_METHODS]
            + [functools.partial(precall.roc_auc, average="macro")])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--classes", type=int, default=5)
    parser.add_argument("--shift", type=float, default=1.0)
    parser.add_argument("--sets", type=int, default=200)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--population", type=int, default=4_000_000)
    parser.add_argument("--max-cells", type=int, default=256)
    parser.add_argument("--no-exact", action="store_true", help="the blocked design only")
    parser.add_argument("--exact-only", action="store_true", help="the exact row bootstrap only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ms = metrics()
    names = ["AP " + m for m in precall.AP_METHODS] + ["ROC-AUC"]
    rng = np.random.default_rng(args.seed)
    y, s = sample(rng, args.population, args.classes, args.shift)
    truth = [float(m(y, s)) for m in ms]
    spread = stats.bootstrap_cis(ms, y, s, n_resamples=200)
    del y, s
    print(f"# {time.strftime('%Y-%m-%d')}, Python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"{platform.machine()}, {os.cpu_count()} cores (shared); {args.classes} classes, shift {args.shift}; "
          f"population {args.population:,} rows; {args.sets} test sets per size, {args.resamples} resamples, "
          f"percentile 95%; blocked: resample='auto', max_cells={args.max_cells}")
    print("# population (bootstrap SD of the population sample): "
          + ", ".join(f"{n} {t:.5f} ({r.standard_error:.1e})" for n, t, r in zip(names, truth, spread)))
    designs = ["exact rows"] if args.exact_only else ["blocked"] + ([] if args.no_exact else ["exact rows"])
    for n in args.sizes:
        cover = {d: np.zeros((args.sets, len(ms)), bool) for d in designs}
        width = {d: np.zeros((args.sets, len(ms))) for d in designs}
        near = np.zeros((args.sets, len(ms)), bool)
        blocks = []
        t0 = time.process_time()
        for i in range(args.sets):
            y, s = sample(rng, n, args.classes, args.shift)
            seed = int(rng.integers(2**31))
            got = {}
            if not args.exact_only:
                got["blocked"] = stats.bootstrap_cis(ms, y, s, n_resamples=args.resamples, random_state=seed,
                                                     max_cells=args.max_cells)
                blocks.append(got["blocked"][0].n_blocks or 0)
            if not args.no_exact:
                got["exact rows"] = stats.bootstrap_cis(ms, y, s, n_resamples=args.resamples, random_state=seed,
                                                        resample="rows")
            for d in designs:
                for j, (r, t) in enumerate(zip(got[d], truth)):
                    cover[d][i, j] = r.low <= t <= r.high
                    width[d][i, j] = r.high - r.low
            if (i + 1) % 25 == 0 and i + 1 < args.sets:  # partial results, for long runs
                print(f"# n={n}: {i + 1} sets, {designs[0]} coverage so far "
                      + ", ".join(f"{nm} {cover[designs[0]][: i + 1, j].mean():.3f}" for j, nm in enumerate(names)),
                      flush=True)
            if len(designs) == 2:
                for j, (b, e) in enumerate(zip(got["blocked"], got["exact rows"])):
                    w = e.high - e.low
                    near[i, j] = abs(b.low - e.low) <= 0.1 * w and abs(b.high - e.high) <= 0.1 * w
        cpu = time.process_time() - t0
        print(f"\n## n = {n:,} ({n // args.classes:,} per class; blocked: median {int(np.median(blocks)) if blocks else '-'} "
              f"score blocks per column; {cpu:.0f} s CPU)\n")
        print("| metric | population | " + " | ".join(f"{d} coverage | {d} width" for d in designs)
              + (" | bounds within 0.1 width" if len(designs) == 2 else "") + " |")
        print("|---|---:|" + "---:|---:|" * len(designs) + ("---:|" if len(designs) == 2 else ""))
        for j, name in enumerate(names):
            cells = []
            for d in designs:
                c = cover[d][:, j].mean()
                cells += [f"{c:.3f} (SE {np.sqrt(c * (1 - c) / args.sets):.3f})", f"{width[d][:, j].mean():.4f}"]
            if len(designs) == 2:
                cells.append(f"{near[:, j].mean():.3f}")
            print(f"| macro {name} | {truth[j]:.5f} | " + " | ".join(cells) + " |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
