"""``evaluate`` (every convention, ROC-AUC, AUPRG, best F1) against one ``average_precision``, and
the kernels of the numbers (``evaluation.batch_numbers``) by numpy and by the compiled twin.

    python benchmarks/bench_evaluate.py [n_rows]      (default 1e7)

For each prevalence (1%, 10%, 30%, 50%) and score type (float32, float64; continuous scores) and
each kernel choice ("numpy", "numba"): CPU seconds of one ``average_precision`` and one
``evaluate`` (best of 3, interleaved), their ratio, and the kernels alone on the same steps.
"""

from __future__ import annotations

import importlib.util
import platform
import sys
import time

import numpy as np

import precall
from precall._core import backend
from precall._core.evaluation import batch_numbers
from precall._core.steps import steps_and_grouped
from precall._core.validate import check_binary


def _cpu(f, repeat=3):
    """The best CPU time of ``repeat`` runs (the wall clock of a shared machine carries the others)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best


def main(n: int) -> None:
    has_numba = importlib.util.find_spec("numba") is not None
    print(f"machine: {platform.processor() or platform.machine()}, python {sys.version.split()[0]}, "
          f"numpy {np.__version__}; {n:.0e} rows, CPU seconds (best of 3)")
    kernels = ("numpy", "numba") if has_numba else ("numpy",)
    if has_numba:  # numba's import and disk cache, once a process
        backend.set_kernel("numba")
        precall.evaluate(np.arange(1000) % 3 == 0, np.random.default_rng(0).random(1000))
    print("prevalence  dtype    kernel   AP      evaluate  ratio   numbers (kernels alone)")
    for prevalence in (0.01, 0.1, 0.3, 0.5):
        rng = np.random.default_rng(0)
        y = (rng.random(n) < prevalence).astype(np.int8)
        for dtype in (np.float32, np.float64):
            s = rng.random(n).astype(dtype)
            for kernel in kernels:
                backend.set_kernel(kernel)
                ap = evaluate = float("inf")
                for _ in range(3):  # interleaved rounds
                    ap = min(ap, _cpu(lambda: precall.average_precision(y, s), 1))
                    evaluate = min(evaluate, _cpu(lambda: precall.evaluate(y, s), 1))
                steps, grouped = steps_and_grouped(check_binary(y, s), "group")
                numbers = _cpu(lambda: batch_numbers(steps, grouped))
                print(f"{prevalence:>10.0%}  {np.dtype(dtype).name:7}  {kernel:7}  {ap:6.3f}  {evaluate:8.3f}  "
                      f"{evaluate / ap:5.2f}x  {numbers:6.3f} ({steps.tp.shape[1]:,} steps)")
    backend.set_kernel("auto")


if __name__ == "__main__":
    main(int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**7)
