"""precall.stats speed (issue 4's targets), every comparison in one process.

1. 2000 stratified bootstrap resamples of step AP at n = 1e5: precall.stats.bootstrap_ci
   (replicates counted over one sort) against a naive loop that draws the same kind of
   resample and calls scikit-learn's average_precision_score on it.  Target: >= 10x.
2. DeLong CI at n = 1e7 (precall.stats.roc_auc_ci) against one precall.roc_auc call on the
   same data.  Target: <= 3x.
Also shown: the BCa interval and the paired bootstrap test at n = 1e5.

    python benchmarks/bench_stats.py [--scale 0.1] [--repeats 3] [--output FILE]
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
import sklearn
from sklearn.metrics import average_precision_score

import precall
from _timing import emit, median_time
from precall import stats


def _data(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    y = rng.random(n) < 0.1
    s = 1.0 / (1.0 + np.exp(-(rng.normal(size=n) + 1.5 * y - 1.0)))
    return y.astype(np.int8), s


def _naive_bootstrap(y: np.ndarray, s: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """What people write today: resample each class, call scikit-learn, repeat."""
    rng = np.random.default_rng(seed)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    out = np.empty(n_resamples)
    for b in range(n_resamples):
        rows = np.concatenate([pos[rng.integers(0, pos.size, pos.size)],
                               neg[rng.integers(0, neg.size, neg.size)]])
        out[b] = average_precision_score(y[rows], s[rows])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the sample sizes")
    parser.add_argument("--repeats", type=int, default=3, help="repeats of the fast calls")
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--output", help="also write the markdown table here")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    rows: list[str] = []

    n = int(1e5 * args.scale)
    y, s = _data(rng, n)
    B = args.resamples
    t_fast, res = median_time(lambda: stats.bootstrap_ci("average_precision", y, s, n_resamples=B,
                                                   random_state=1), args.repeats)
    t_naive, naive = median_time(lambda: _naive_bootstrap(y, s, B, 1), 1)
    print(f"  bootstrap step AP n={n:.0e} B={B}: precall {t_fast:.3f} s, naive {t_naive:.3f} s, "
          f"ratio {t_naive / t_fast:.1f}", flush=True)
    q_fast = np.quantile(res.replicates, [0.025, 0.975])
    q_naive = np.quantile(naive, [0.025, 0.975])
    rows.append(f"| {B} stratified bootstrap resamples, step AP, n={n:.0e} | {t_fast:.3f} | "
                f"naive loop + sklearn: {t_naive:.3f} | {t_naive / t_fast:.1f}x (target >= 10x) | "
                f"precall [{q_fast[0]:.4f}, {q_fast[1]:.4f}], naive [{q_naive[0]:.4f}, {q_naive[1]:.4f}] |")

    t_bca, bca = median_time(lambda: stats.bootstrap_ci("average_precision", y, s, n_resamples=B,
                                                  method="bca", random_state=1), args.repeats)
    rows.append(f"| same, BCa (jackknife: {bca.jackknife}) | {t_bca:.3f} | naive loop + sklearn: "
                f"{t_naive:.3f} | {t_naive / t_bca:.1f}x | [{bca.low:.4f}, {bca.high:.4f}] |")
    s_b = np.clip(s + rng.normal(0, 0.05, n), 0, 1)
    t_pair, pair = median_time(lambda: stats.bootstrap_test("average_precision", y, s, s_b, n_resamples=B,
                                                      random_state=1), args.repeats)
    rows.append(f"| paired bootstrap test, step AP, two models, n={n:.0e} | {t_pair:.3f} | "
                f"(naive: two sklearn calls per resample, ~{2 * t_naive:.0f}) | "
                f"{2 * t_naive / t_pair:.1f}x | p = {pair.p_value:.3g} |")
    print(f"  bca {t_bca:.3f} s, paired {t_pair:.3f} s", flush=True)
    del y, s, s_b

    n2 = int(1e7 * args.scale)
    y2, s2 = _data(rng, n2)
    t_auc, auc = median_time(lambda: precall.roc_auc(y2, s2), args.repeats)
    t_ci, ci = median_time(lambda: stats.roc_auc_ci(y2, s2), args.repeats)
    print(f"  DeLong CI n={n2:.0e}: {t_ci:.3f} s, roc_auc {t_auc:.3f} s, ratio {t_ci / t_auc:.2f}",
          flush=True)
    rows.append(f"| DeLong CI, n={n2:.0e} | {t_ci:.3f} | precall.roc_auc: {t_auc:.3f} | "
                f"{t_ci / t_auc:.2f} of one roc_auc call (target <= 3) | {ci} |")
    t_test, test = median_time(lambda: stats.roc_auc_test(y2, s2, s2 + rng.normal(0, 0.5, n2)), 1)
    rows.append(f"| DeLong paired test, n={n2:.0e} (two unsorted columns) | {t_test:.3f} | "
                f"precall.roc_auc: {t_auc:.3f} | {t_test / t_auc:.2f} | z = {test.statistic:.3g} |")

    lines = [
        "## precall.stats: bootstrap and DeLong",
        "",
        f"- {platform.platform()}; Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, precall {precall.__version__}; fast calls: median of "
        f"{args.repeats}, naive loop: 1 run",
        "- data: 10% positives, scores = sigmoid(N(0,1) + 1.5 y - 1), seed 0",
        "",
        "| case | precall s | compared with (s) | ratio | result |",
        "|---|---:|---|---|---|",
        *rows,
    ]
    emit(lines, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
