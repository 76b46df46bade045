"""``precall.SlicedAccumulator`` with many slices: time and memory of ``update`` and ``evaluate``.

``python benchmarks/bench_sliced_accumulator.py [rows] [slices] [batches]`` (default 1e6 rows, 100,000
slices, 4 batches; labels and scores 0 or 1, as the audit's ``sacc_mem.py``).  The batches are made
before the first reading, so the figures are the accumulator's: the RSS it holds after the updates and
its peak (``/proc/self/status``, Linux), the live state by ``tracemalloc`` in a second run, against the
payload's size; ``evaluate`` against the in-memory ``precall.evaluate(by=)`` of the same rows.
"""

from __future__ import annotations

import gc
import resource
import sys
import time
import tracemalloc
import warnings

import numpy as np

import precall


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        fields = dict(line.split(":", 1) for line in f)
    return int(fields["VmRSS"].split()[0]) / 1024


def main() -> None:
    warnings.simplefilter("ignore")
    n, m, k = (int(float(a)) for a in (sys.argv[1:] + ["1e6", "1e5", "4"][len(sys.argv) - 1:])[:3])
    rng = np.random.default_rng(0)
    y, s, g = rng.integers(0, 2, n), rng.integers(0, 2, n).astype(float), rng.integers(0, m, n)
    batches = [(y[p], s[p], g[p]) for p in np.array_split(np.arange(n), k)]
    precall.SlicedAccumulator().update(y[:100], s[:100], by=g[:100]).evaluate()  # imports, compiled kernels
    gc.collect()
    peak0, held0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, rss_mb()
    t0 = time.perf_counter()
    acc = precall.SlicedAccumulator()
    for yy, ss, gg in batches:
        acc.update(yy, ss, by=gg)
    t1 = time.perf_counter()
    held, peak = rss_mb() - held0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - peak0
    acc.evaluate()
    t2 = time.perf_counter()
    payload = len(acc.to_bytes()) / 1e6
    t3 = time.perf_counter()
    precall.evaluate(y, s, by=g)
    t4 = time.perf_counter()
    del acc
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    acc = precall.SlicedAccumulator()
    for yy, ss, gg in batches:
        acc.update(yy, ss, by=gg)
    live = (tracemalloc.get_traced_memory()[0] - before) / 1e6
    tracemalloc.stop()
    print(f"{n} rows, {len(acc)} slices, {k} batches: update {t1 - t0:.2f} s, evaluate {t2 - t1:.2f} s "
          f"(in memory {t4 - t3:.2f} s); RSS held after the updates +{held:.0f} MB, peak +{peak:.0f} MB; "
          f"live state {live:.1f} MB; payload {payload:.1f} MB")


if __name__ == "__main__":
    main()
