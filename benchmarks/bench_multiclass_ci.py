"""Multi-class intervals in about a minute (issue 27, item 3): 2000 resamples of every metric
(the six AP conventions and ROC-AUC, macro averages, as ``precall evaluate --class-columns --ci``
prints them) at 1e6 rows x 10 classes.

1. ``precall.stats.bootstrap_cis`` of the seven macro metrics, ``resample="auto"`` (rows drawn,
   each class column counted over score blocks), numba installed: CPU and wall time.
2. The same with the numpy fallback (numba's loop switched off) and the exact row bootstrap
   (``resample="rows"``: every run counted), on ``--sample`` resamples, the time per resample
   extrapolated to 2000 (said as such).
3. ``precall evaluate FILE --label y --class-columns ... --ci`` end to end on a Parquet file
   (a fresh process: reading, the point estimates, the intervals), CPU time of the child.

    python benchmarks/bench_multiclass_ci.py [--rows 1000000] [--classes 10] [--resamples 2000]
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import precall
from precall import stats
from precall._core import backend


def data(n: int, k: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += 1.5
    scores = np.exp(logits)
    return y, scores / scores.sum(axis=1, keepdims=True)


def timed(fn) -> tuple[float, float, object]:
    c0, w0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c0, time.perf_counter() - w0, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--sample", type=int, default=128, help="resamples of the slow routes")
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--ab", action="store_true",
                        help="only numba against the numpy fallback: 2 and 258 resamples each, two rounds")
    args = parser.parse_args()
    n, k = args.rows, args.classes
    y, s = data(n, k)
    ms = ([functools.partial(precall.average_precision, method=m, average="macro") for m in precall.AP_METHODS]
          + [functools.partial(precall.roc_auc, average="macro")])
    load = os.getloadavg()[0]
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, Python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"kernel {backend.get_kernel()} (numba {'yes' if backend._load() is not None else 'no'}), {platform.machine()}, "
          f"{os.cpu_count()} cores shared with other work (load average {load:.1f} at the start); "
          f"{n:,} rows x {k} classes, seven macro metrics")
    if args.ab:
        saved = backend.get_kernel()
        for rnd in range(2):
            for name in ("numba", "numpy"):
                backend.set_kernel(name)
                c2 = timed(lambda: stats.bootstrap_cis(ms, y, s, n_resamples=2))[0]
                c258 = timed(lambda: stats.bootstrap_cis(ms, y, s, n_resamples=258))[0]
                print(f"round {rnd} {name}: set-up {c2:.1f} s, {(c258 - c2) / 256 * 1e3:.1f} ms CPU a resample, "
                      f"2000 resamples about {c2 + (c258 - c2) / 256 * 2000:.0f} s", flush=True)
        backend.set_kernel(saved)
        return
    print("\n| route | resamples | CPU s | wall s | CPU s per 2000 |")
    print("|---|---:|---:|---:|---:|")

    def row(name: str, r: int, cpu: float, wall: float, fixed: float = 0.0) -> None:
        per = cpu if r == 2000 else fixed + max(cpu - fixed, 0.0) * 2000 / r
        print(f"| {name} | {r} | {cpu:.1f} | {wall:.1f} | {per:.1f}{'' if r == 2000 else ' (extrapolated)'} |")
        sys.stdout.flush()

    cpu0, wall0, _ = timed(lambda: stats.bootstrap_cis(ms, y, s, n_resamples=2))  # estimates, sorts, set-up
    print(f"| set-up only (estimates, ranking, blocks; 2 resamples) | 2 | {cpu0:.1f} | {wall0:.1f} | |")
    cpu, wall, res = timed(lambda: stats.bootstrap_cis(ms, y, s, n_resamples=args.resamples))
    row(f"auto: rows over {res[0].n_blocks or 'every run as its own'} score blocks per column, numba", args.resamples, cpu, wall, cpu0)
    saved = backend.set_kernel("numpy")
    try:
        cpu, wall, _ = timed(lambda: stats.bootstrap_cis(ms, y, s, n_resamples=args.sample))
        row("auto, numpy fallback", args.sample, cpu, wall, cpu0)
    finally:
        backend.set_kernel(saved)
    cpu, wall, _ = timed(lambda: stats.bootstrap_cis(ms, y, s, n_resamples=args.sample, resample="rows"))
    row("exact rows (every run counted), numba", args.sample, cpu, wall, cpu0)
    if args.skip_cli:
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "multiclass.parquet")
        table = {"y": y.astype(str)} | {f"p{c}": s[:, c] for c in range(k)}
        pq.write_table(pa.table(table), path)
        spec = ",".join(f"{c}=p{c}" for c in range(k))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        argv = ["evaluate", path, "--label", "y", "--class-columns", spec, "--ci", "--resamples",
                str(args.resamples)]
        done = subprocess.run([sys.executable, "-c", f"import sys; from precall.cli import main; sys.exit(main({argv!r}))"],
                              capture_output=True, text=True, check=True)
        wall = time.perf_counter() - w0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        row("`precall evaluate --class-columns --ci` (fresh process, Parquet)", args.resamples, cpu, wall, cpu)
        print("\n" + "\n".join(line for line in done.stdout.splitlines() if "interval" in line))


if __name__ == "__main__":
    main()
