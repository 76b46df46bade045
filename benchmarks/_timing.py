"""Shared helper of the benchmark scripts (run them from the repository root)."""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc
from typing import Any, Callable


def median_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median wall time of ``repeats`` calls of ``fn`` and its last result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def emit(lines: list[str], output: str | None) -> None:
    """Print the markdown report and, with ``--output``, write it to that file."""
    text = "\n".join(lines) + "\n"
    print(text)
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)


def peak_memory(func: Callable[[], Any]) -> int:
    """Peak bytes allocated (and traced) while ``func`` runs, beyond what existed before."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        func()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
