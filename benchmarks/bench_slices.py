"""Slices: precall's by= against one evaluation of all rows and a pandas groupby().apply() of
scikit-learn's average_precision_score (and fairlearn's MetricFrame when installed).

    python benchmarks/bench_slices.py [n_rows ...]      (default 1e6 1e7; 1,000 slices)

Each by= is timed with the numpy route and with the compiled passes (numba, the `fast` extra),
both against one evaluation of all rows in the same process, in turns (best of ``ROUNDS``): the
wall time (by= makes all rows' steps and numbers in a second thread beside the slices', from
``backend.MIN_BESIDE`` rows) and the CPU time of every thread of the process.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import sys
import time

import numpy as np

import precall
from precall._core import backend


ROUNDS = 5


def _best(clock, f, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t = clock()
        f()
        best = min(best, clock() - t)
    return best


def _time(f, repeat=3):
    """The best wall time of ``repeat`` runs."""
    return _best(time.perf_counter, f, repeat)


def main(sizes):
    has_numba = importlib.util.find_spec("numba") is not None
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, python "
          f"{sys.version.split()[0]}, numpy {np.__version__}; best of {ROUNDS} in turns; the compiled passes: "
          f"{'numba' if has_numba else 'not installed'}")
    for n in sizes:
        rng = np.random.default_rng(0)
        g = rng.integers(0, 1000, n)
        y = (rng.random(n) < 0.1 + 0.3 * (g % 7) / 7).astype(np.int8)
        for dtype in (np.float32, np.float64):
            s = rng.random(n).astype(dtype)
            if has_numba:  # numba's import and disk cache, once a process
                backend.set_kernel("numba")
                precall.evaluate(y[:1000], s[:1000], by=g[:1000])
                backend.set_kernel("auto")
            for mode in ("numpy", "numba"):  # every route of one kernel choice against each other
                if mode == "numba" and not has_numba:
                    continue
                backend.set_kernel(mode)
                calls = {"one": lambda: precall.evaluate(y, s), "by": lambda: precall.evaluate(y, s, by=g),
                         "ap": lambda: precall.average_precision(y, s),
                         "ap_by": lambda: precall.average_precision(y, s, by=g)}
                wall = {k: float("inf") for k in calls}
                cpu = dict(wall)
                for _ in range(ROUNDS):  # in turns: a shared machine's slow spells fall on every call alike
                    for k, f in calls.items():
                        w, c = time.perf_counter(), time.process_time()
                        f()
                        wall[k] = min(wall[k], time.perf_counter() - w)
                        cpu[k] = min(cpu[k], time.process_time() - c)
                w_ap_by = wall["ap_by"]  # wall, as the tools below
                print(f"n={n:.0e}, {np.dtype(dtype).name} scores, 1,000 slices, {mode:5s}: evaluate wall "
                      f"{wall['one']:.3f}s, evaluate(by=) wall {wall['by']:.3f}s ({wall['by'] / wall['one']:.2f}x; CPU "
                      f"{cpu['by'] / cpu['one']:.2f}x); average_precision wall {wall['ap']:.3f}s, (by=) "
                      f"{wall['ap_by']:.3f}s ({wall['ap_by'] / wall['ap']:.2f}x; CPU {cpu['ap_by'] / cpu['ap']:.2f}x)")
            backend.set_kernel("auto")
        try:
            import pandas as pd
            from sklearn.metrics import average_precision_score
        except ImportError:
            continue
        df = pd.DataFrame({"y": y, "s": s, "g": g})
        pg = _time(lambda: df.groupby("g").apply(lambda d: average_precision_score(d.y, d.s), include_groups=False),
                   repeat=1)
        print(f"  pandas groupby().apply(average_precision_score): {pg:.3f}s wall ({pg / w_ap_by:.1f}x precall "
              "average_precision(by=), wall)")
        try:
            from fairlearn.metrics import MetricFrame
        except ImportError:
            print("  fairlearn: not installed")
            continue
        fl = _time(lambda: MetricFrame(metrics=average_precision_score, y_true=y, y_pred=s, sensitive_features=g),
                   repeat=1)
        print(f"  fairlearn MetricFrame(average_precision_score): {fl:.3f}s wall ({fl / w_ap_by:.1f}x precall "
              "average_precision(by=), wall)")


if __name__ == "__main__":
    main([int(float(a)) for a in sys.argv[1:]] or [1_000_000, 10_000_000])
