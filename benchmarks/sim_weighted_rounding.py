"""Where precall.spark's weighted results differ from in-memory precall, and by how much (issue 26).

With float weights every metric is a function of the cumulative weights TP_k and FP_k at each
distinct score.  Every route sums them with one compensated cumsum
(``precall._core.sort.compensated_cumsum``: numpy's sequential cumsum plus the running sum of
each addition's exact TwoSum error), so each lands within about an ulp of the exact sum, whatever
the order of the rows: in memory (rows in stable descending order, tied rows in input order), the
score ranges (each range summed from 0, then shifted by the correctly rounded weight of the
ranges above) and the accumulator (per-score sums, then the compensated cumsum).  Before, in
memory was scikit-learn's plain sequential cumsum, whose rounding grows with the rows (7.7e-15
from the exact value at 1e6 rows).

This script measures, for each route, the largest difference over the six AP conventions and
ROC-AUC from the value computed on *correctly rounded* cumulative weights (exact integer sums,
rounded once: the best any float route can do):

* ``in memory``: precall.evaluate;
* ``in memory, tied rows permuted``: the same rows in another input order (only the order of
  rows within runs of equal scores changes);
* ``ranges, input order``: the score ranges with each range in input order (precall.dask's split);
* ``ranges, canonical order``: precall.spark's arithmetic (each range's rows in the canonical
  order (score, label, weight), shifted by the correctly rounded prefix; no Spark needed: the
  same functions);
* ``accumulator``: per-score sums then a cumsum (precall.Accumulator, by=, --stream).

    python benchmarks/sim_weighted_rounding.py [--rows 1e6] [--ranges 8] [--seeds 3] [--output FILE]
"""

from __future__ import annotations

import argparse
import math
import platform

import numpy as np
import pandas as pd

import precall
from _timing import emit
from precall._core.validate import BinaryInput
from precall.scale import ranges as R
from precall.scale.spark import _POS, _canonical, _prefix
from precall.table import trusted_table


def exact_evaluation(y: np.ndarray, s: np.ndarray, w: np.ndarray) -> precall.Evaluation:
    """The grouped table with each cumulative weight summed exactly (Python integers in units of
    the smallest weight's ulp) and rounded once, then evaluated by precall's kernels."""
    keep = w > 0
    y, s, w = y[keep], s[keep], w[keep]
    mant, expo = np.frexp(w)
    m = (mant * 2.0**53).astype(np.int64)  # w = m * 2**(expo - 53), exactly
    low = int(expo.min())
    units = np.array([int(a) << int(b) for a, b in zip(m.tolist(), (expo - low).tolist())], dtype=object)
    order = np.argsort(-s, kind="stable")
    s, y, units = s[order], y[order], units[order]
    last = np.flatnonzero(np.append(s[1:] != s[:-1], True))
    zero = np.array([0] * s.size, dtype=object)
    tp = np.cumsum(np.where(y == 1, units, zero))[last]
    fp = np.cumsum(np.where(y == 1, zero, units))[last]

    def rounded(values: np.ndarray) -> np.ndarray:  # int -> float is correctly rounded; the scaling is exact
        return np.array([math.ldexp(float(v), low - 53) for v in values.tolist()])

    tp, fp = rounded(tp), rounded(fp)
    return trusted_table(s[last], tp, fp, tp[-1], fp[-1], "group").evaluate()


def ranges_evaluation(y: np.ndarray, s: np.ndarray, w: np.ndarray, n_ranges: int, canonical: bool) -> precall.Evaluation:
    """The score-range reduction: each range's steps from its rows (canonical order as
    precall.spark, or input order as precall.dask's split), shifted by the prefix, combined."""
    keep = w > 0
    y, s, w = y[keep], s[keep], w[keep]
    cuts = np.unique(np.quantile(np.unique(s), np.arange(1, n_ranges) / n_ranges, method="lower"))
    which = np.searchsorted(cuts, s, side="right")
    local = []
    for r in range(cuts.size + 1):
        rows = np.flatnonzero(which == r)
        if canonical:
            data = _canonical(pd.DataFrame({"s": s[rows], _POS: y[rows] == 1, "w": w[rows]}), True)
        else:
            data = BinaryInput(s[rows], y[rows] == 1, w[rows], True, rows.size)
        local.append(R.local_steps([data]) if rows.size else None)
    if canonical:  # precall.spark's driver
        prefix_of, grand = _prefix([{"r": r, "n_pos": t[0], "n_neg": t[1], "exact": t[2]} for r, t in
                                    enumerate(R.totals(x) for x in local)], len(local))
        prefix = [prefix_of[r] for r in range(len(local))]
    else:
        prefix, grand = R.offsets([R.totals(x) for x in local])
    steps = [R.shift(x, prefix[r], grand) for r, x in enumerate(local)]
    parts = [R.summarize(st, "reference") for st in steps]
    below = R.suffix_best(parts)
    voc = [R.voc2010_sum(st, below[r]) for r, st in enumerate(steps)]
    return R.combine(parts, voc, grand, n_samples=int(s.size), recall_grid="reference")


def numbers(ev: precall.Evaluation) -> np.ndarray:
    return np.array([*(ev.average_precision[m] for m in precall.AP_METHODS), ev.roc_auc])


def permute_ties(s: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A row order that differs from the input order only within runs of equal scores."""
    return np.lexsort((rng.random(s.size), np.searchsorted(np.unique(s), s)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e6)
    parser.add_argument("--ranges", type=int, default=8)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--output")
    args = parser.parse_args()
    n = int(args.rows)
    routes = ["in memory", "in memory, tied rows permuted", "ranges, input order", "ranges, canonical order (spark)",
              "accumulator (by=, --stream)"]
    lines = [f"{n:.0e} rows, 30% positives, weights uniform in [0.1, 3), {args.ranges} ranges, seeds 0-{args.seeds - 1}; "
             f"numpy {np.__version__}, {platform.python_implementation()} {platform.python_version()}", "",
             "largest |value - value on correctly rounded cumulative weights| over the six AP conventions and "
             "ROC-AUC (max over seeds); last column: largest |route - in memory|", "",
             "| scores | route | from correctly rounded | from in memory |", "|---|---|---:|---:|"]
    for kind in ("2 decimals (100 distinct: long ties)", "continuous (float64, no ties)"):
        worst = {r: [0.0, 0.0] for r in routes}
        for seed in range(args.seeds):
            rng = np.random.default_rng(seed)
            y = (rng.random(n) < 0.3).astype(np.int64)
            raw = rng.random(n) + 0.35 * y
            s = np.round(raw, 2) if kind.startswith("2") else raw
            w = rng.uniform(0.1, 3.0, n)
            exact = numbers(exact_evaluation(y, s, w))
            memory = numbers(precall.evaluate(y, s, sample_weight=w))
            p = permute_ties(s, rng)
            acc = precall.Accumulator()
            for part in np.array_split(np.arange(n), 7):
                acc.update(y[part], s[part], sample_weight=w[part])
            got = {
                "in memory": memory,
                "in memory, tied rows permuted": numbers(precall.evaluate(y[p], s[p], sample_weight=w[p])),
                "ranges, input order": numbers(ranges_evaluation(y, s, w, args.ranges, canonical=False)),
                "ranges, canonical order (spark)": numbers(ranges_evaluation(y, s, w, args.ranges, canonical=True)),
                "accumulator (by=, --stream)": numbers(acc.evaluate()),
            }
            for r, v in got.items():
                worst[r][0] = max(worst[r][0], float(np.max(np.abs(v - exact))))
                worst[r][1] = max(worst[r][1], float(np.max(np.abs(v - memory))))
        for r in routes:
            lines.append(f"| {kind} | {r} | {worst[r][0]:.1e} | {worst[r][1]:.1e} |")
    emit(lines, args.output)


if __name__ == "__main__":
    main()
