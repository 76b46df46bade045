"""Intervals in bounded time (issue 16 item 2): ``--ci`` and ``compare`` at 5e6 rows, and coverage.

Two parts, both printed as markdown:

* **time**: writes a CSV of ``--rows`` rows (``y`` 0/1 with prevalence 0.3, ``a = y +
  N(0, 1)``, ``b = 0.8 a + 0.6 N(0, 1)``: continuous scores, so about one run of tied
  scores per row) and runs, each as a fresh subprocess with the default 2000 resamples,
  ``precall evaluate FILE --label y --score a --ci`` and ``precall compare FILE --label y
  --score a --score b``: the wall time to the first line of output (the point estimates or
  the input summary, printed before the resampling) and to the end, and how the
  resamples were drawn.
* **coverage**: ``--datasets`` data sets of ``--n`` rows drawn from the same population
  (3,000 positives in 10,000 rows each, the class counts the stratified bootstrap conditions
  on; ``--random-prevalence`` draws the labels instead);
  for each, 95% percentile intervals of step AP and ROC-AUC by ``resample="counts"``
  exact (every run its own cell) and blocked (``max_cells`` forced small, so runs merge
  into score blocks and the interval is shifted onto the exact estimate); the share of
  intervals that contain the population value.  The population ROC-AUC is
  ``Phi(1 / sqrt(2))``; the population AP is the integral of precision over recall of
  the two normal score distributions, computed on a fine grid.
* **paired**: the same for the paired intervals of A - B of two correlated models (joint
  cells exact, and blocked with ``--paired-cells``).

Run from the repository root::

    python benchmarks/bench_ci.py                         # every part
    python benchmarks/bench_ci.py --part coverage --datasets 400
    python benchmarks/bench_ci.py --part paired --datasets 200
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import emit  # noqa: E402

PREVALENCE = 0.3


def _machine() -> str:
    return f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"


def write_csv(path: str, rows: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    y = (rng.random(rows) < PREVALENCE).astype(np.int8)
    a = y + rng.normal(size=rows)
    b = 0.8 * a + 0.6 * rng.normal(size=rows)
    try:
        import pyarrow as pa
        import pyarrow.csv as pc

        pc.write_csv(pa.table({"y": y, "a": a, "b": b}), path)
    except ImportError:
        np.savetxt(path, np.column_stack([y, a, b]), delimiter=",", header="y,a,b", comments="",
                   fmt=["%d", "%.17g", "%.17g"])


def timed_run(argv: list[str]) -> tuple[float, float, str]:
    """Wall time to the first stdout line and to the end, and the whole stdout."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "precall", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    t_first = time.perf_counter() - t0
    rest = proc.stdout.read()
    err = proc.stderr.read() if proc.stderr is not None else ""
    code = proc.wait()
    t_end = time.perf_counter() - t0
    if code != 0:
        raise RuntimeError(f"precall {' '.join(argv)} exited {code}: {err}")
    return t_first, t_end, first + rest


def part_time(rows: int, path: str) -> list[str]:
    if not os.path.exists(path):
        write_csv(path, rows)
    cases = [
        ("evaluate --ci", ["evaluate", path, "--label", "y", "--score", "a", "--ci"]),
        ("compare", ["compare", path, "--label", "y", "--score", "a", "--score", "b"]),
    ]
    lines = [f"### `--ci` and `compare` on {rows:.0e} rows, 2000 resamples (default)", "",
             f"machine: {_machine()}; load average before: {os.getloadavg()[0]:.2f}", "",
             "| command | first output (s) | total (s) | resamples drawn as |", "|---|---:|---:|---|"]
    for name, argv in cases:
        t_first, t_end, out = timed_run(argv)
        drawn = next((line for line in out.splitlines() if "drawn as" in line), "")
        text = " ".join(out.split())
        i = text.find("drawn as")
        drawn = text[i:].split(" for ")[0] if i >= 0 else drawn
        lines.append(f"| `{name}` | {t_first:.1f} | {t_end:.1f} | {drawn} |")
    return lines


def population_values(shift: float = 1.0) -> tuple[float, float]:
    """Population step AP and ROC-AUC of y with prevalence 0.3, score ~ N(shift * y, 1)."""
    from statistics import NormalDist

    z = NormalDist()
    auc = z.cdf(shift / math.sqrt(2))
    t = np.linspace(-12, 14, 400_001)  # thresholds, decreasing recall as t grows
    sf = np.array([1 - z.cdf(v) for v in t[::1000]])  # coarse check of the vectorised form
    erfc = np.vectorize(math.erfc)
    recall = 0.5 * erfc((t - shift) / math.sqrt(2))
    fpr = 0.5 * erfc(t / math.sqrt(2))
    assert np.allclose(fpr[::1000], sf)
    precision = PREVALENCE * recall / (PREVALENCE * recall + (1 - PREVALENCE) * fpr)
    ap = float(np.sum(-np.diff(recall) * 0.5 * (precision[1:] + precision[:-1])))
    return ap, auc


def _labels(rng: np.random.Generator, n: int, random_prevalence: bool) -> np.ndarray:
    if random_prevalence:
        return (rng.random(n) < PREVALENCE).astype(int)
    positives = round(PREVALENCE * n)  # the class counts the stratified bootstrap conditions on
    return rng.permutation(np.repeat([1, 0], [positives, n - positives]))


def part_paired(datasets: int, n: int, resamples: int, blocked_cells: int) -> list[str]:
    """Coverage of the paired intervals of A - B (b = 0.8 a + 0.6 N(0, 1), so b ~ N(0.8 y, 1))."""
    import precall
    from precall import stats

    truth = np.subtract(population_values(1.0), population_values(0.8))
    metrics = [precall.average_precision, precall.roc_auc]
    modes = {"exact joint counts": 1 << 16, f"blocked (max_cells={blocked_cells})": blocked_cells}
    hits = {m: np.zeros(2) for m in modes}
    width = {m: np.zeros(2) for m in modes}
    blocks = []
    t0 = time.perf_counter()
    for k in range(datasets):
        rng = np.random.default_rng(5000 + k)
        y = _labels(rng, n, False)
        a = y + rng.normal(size=n)
        b = 0.8 * a + 0.6 * rng.normal(size=n)
        for mode, cells in modes.items():
            res = stats.bootstrap_tests(metrics, y, a, b, n_resamples=resamples, random_state=k,
                                        resample="counts", max_cells=cells)
            for j, (r, true) in enumerate(zip(res, truth)):
                hits[mode][j] += r.low <= true <= r.high
                width[mode][j] += r.high - r.low
            if cells == blocked_cells:
                blocks.append(res[0].n_blocks or 0)
    lines = [f"### Coverage of 95% paired intervals of A - B ({datasets} data sets of {n} rows, {resamples} "
             "resamples)", "", f"a ~ N(y, 1), b = 0.8 a + 0.6 N(0, 1) ~ N(0.8 y, 1) (correlation 0.83); "
             f"population differences: step AP {truth[0]:.5f}, ROC-AUC {truth[1]:.5f}; blocked: median "
             f"{int(np.median(blocks))} score blocks per model; {time.perf_counter() - t0:.0f} s", "",
             "| resampling | coverage step AP | coverage ROC-AUC | mean width AP | mean width AUC |",
             "|---|---:|---:|---:|---:|"]
    for mode in modes:
        c, w = hits[mode] / datasets, width[mode] / datasets
        lines.append(f"| {mode} | {c[0]:.3f} | {c[1]:.3f} | {w[0]:.4f} | {w[1]:.4f} |")
    return lines


def part_coverage(datasets: int, n: int, resamples: int, blocked_cells: int, random_prevalence: bool = False
                  ) -> list[str]:
    import precall
    from precall import stats

    true_ap, true_auc = population_values()
    metrics = [precall.average_precision, precall.roc_auc]
    modes = {"exact counts": 1 << 20, f"blocked (max_cells={blocked_cells})": blocked_cells}
    hits = {m: np.zeros(2) for m in modes}
    width = {m: np.zeros(2) for m in modes}
    estimates = np.zeros((datasets, 2))
    blocks = []
    t0 = time.perf_counter()
    for k in range(datasets):
        rng = np.random.default_rng(1000 + k)
        y = _labels(rng, n, random_prevalence)
        s = y + rng.normal(size=n)
        for mode, cells in modes.items():
            res = stats.bootstrap_cis(metrics, y, s, n_resamples=resamples, random_state=k, resample="counts",
                                      max_cells=cells)
            for j, (r, truth) in enumerate(zip(res, (true_ap, true_auc))):
                hits[mode][j] += r.low <= truth <= r.high
                width[mode][j] += r.high - r.low
                estimates[k, j] = r.estimate
            if cells == blocked_cells:
                blocks.append(res[0].n_blocks or 0)
    elapsed = time.perf_counter() - t0
    se = math.sqrt(0.95 * 0.05 / datasets)
    lines = [f"### Coverage of 95% percentile intervals ({datasets} data sets of {n} rows, {resamples} resamples)",
             "", f"population: {'y ~ Bernoulli' if random_prevalence else 'fixed class counts,'} prevalence "
             f"{PREVALENCE}, score ~ N(y, 1); step AP {true_ap:.5f}, ROC-AUC "
             f"{true_auc:.5f}; blocked runs: median {int(np.median(blocks))} score blocks (of about "
             f"{int(n * 0.6)} runs); binomial SE of a coverage near 0.95: {se:.3f}; {elapsed:.0f} s",
             "", f"the estimates over the data sets: step AP mean - population {estimates[:, 0].mean() - true_ap:+.5f} "
             f"(SD {estimates[:, 0].std(ddof=1):.5f}), ROC-AUC {estimates[:, 1].mean() - true_auc:+.5f} "
             f"(SD {estimates[:, 1].std(ddof=1):.5f})",
             "", "| resampling | coverage step AP | coverage ROC-AUC | mean width AP | mean width AUC |",
             "|---|---:|---:|---:|---:|"]
    for mode in modes:
        c, w = hits[mode] / datasets, width[mode] / datasets
        lines.append(f"| {mode} | {c[0]:.3f} | {c[1]:.3f} | {w[0]:.4f} | {w[1]:.4f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=["time", "coverage", "paired", "all"], default="all")
    parser.add_argument("--rows", type=float, default=5e6)
    parser.add_argument("--file", default="/tmp/precall_bench_ci.csv")
    parser.add_argument("--datasets", type=int, default=200)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--blocked-cells", type=int, default=2048)
    parser.add_argument("--paired-cells", type=int, default=8192)
    parser.add_argument("--random-prevalence", action="store_true",
                        help="draw y ~ Bernoulli(0.3) (the class counts vary between data sets; the "
                        "stratified bootstrap, conditional on them, then undercovers AP)")
    parser.add_argument("--output")
    args = parser.parse_args()
    lines: list[str] = []
    if args.part in ("time", "all"):
        lines += part_time(int(args.rows), args.file) + [""]
    if args.part in ("coverage", "all"):
        lines += part_coverage(args.datasets, args.n, args.resamples, args.blocked_cells, args.random_prevalence)
        lines.append("")
    if args.part in ("paired", "all"):
        lines += part_paired(args.datasets, args.n, args.resamples, args.paired_cells)
    emit(lines, args.output)


if __name__ == "__main__":
    main()
