"""``evaluate``'s numbers pass against the floor of its divisions (issue 27, item 1's last clause).

Run from the repository root (numba installed)::

    python benchmarks/bench_numbers_floor.py --rows 1e5 1e6 --prevalence 0.5 --dtype float32

For one case (grouped ties) it captures the steps ``evaluate`` passes to the compiled numbers pass, then times,
best of ``--repeats`` (CPU, ``time.process_time``):

* ``np.sort`` of the scores, AP and ``evaluate`` (each called in a loop);
* the compiled prepass (``numbers_prepass``), numpy's ``log1p`` of its ratios and the numbers pass
  (``batch_numbers``) on those steps;
* the floor: one compiled loop over the same four step arrays that computes eight IEEE divisions a step
  (precision, F1, recall, the trapezoid's start, the Davis & Goadrich ratio, three of AUPRG's) into
  arrays, nothing else;

and prints each per step, with the budget per step that ``evaluate`` within 1.2x of one AP leaves.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import numpy as np

from bench_floor import make  # benchmarks/ is on the path when run as a script


def best(f: Callable[[], Any], repeats: int) -> float:
    f()
    times = []
    for _ in range(repeats):
        t = time.process_time()
        f()
        times.append(time.process_time() - t)
    return min(times)


def divisions_loop() -> Any:
    from numba import njit

    @njit(error_model="numpy", cache=False)
    def eight(tp, fp, dtp, fp_prev, p, n, out):  # pragma: no cover - compiled
        r = p / n
        for j in range(tp.shape[0]):
            t = np.float64(tp[j])
            f = np.float64(fp[j])
            d = np.float64(dtp[j])
            fa = np.float64(fp_prev[j])
            den = t + f
            a = t - d
            out[0, j] = t / den
            out[1, j] = 2.0 * t / (den + p)
            out[2, j] = t / p
            out[3, j] = a / (a + fa)
            out[4, j] = d / (a + fa)
            out[5, j] = 1.0 - r * (p - t) / t
            out[6, j] = 1.0 - r * fa / a
            out[7, j] = 1.0 - r * f / t

    return eight


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", nargs="+", default=["1e5", "1e6"])
    ap.add_argument("--prevalence", type=float, default=0.5)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()

    import precall
    from precall._core import backend
    from precall._core import compiled as fast

    backend.set_kernel("numba")
    eight = divisions_loop()
    print("| rows | steps | sort ms | AP ms | evaluate ms | evaluate / AP | prepass ns/step | log1p ns/step | "
          "numbers pass ns/step | 8 divisions ns/step | budget for 1.2x ns/step |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for rows in args.rows:
        n = int(float(rows))
        y, s, _ = make(n, args.prevalence, 0)
        s = s.astype(args.dtype)
        captured: dict[str, list] = {}
        real_pass, real_pre = fast.batch_numbers, fast.numbers_prepass

        def grab(name: str, f: Callable) -> Callable:
            def call(*a: Any) -> Any:
                captured[name] = [x.copy() if isinstance(x, np.ndarray) else x for x in a]
                return f(*a)
            return call

        fast.batch_numbers, fast.numbers_prepass = grab("pass", real_pass), grab("pre", real_pre)
        try:
            precall.evaluate(y, s)
        finally:
            fast.batch_numbers, fast.numbers_prepass = real_pass, real_pre
        if "pass" not in captured or "pre" not in captured:
            print(f"| {rows} | the steps took another route (held as keys): not measured |")
            continue
        tp, fp, dtp, fp_prev = (a[0] for a in captured["pass"][:4])
        steps = tp.shape[0]
        p, q = float(captured["pass"][4][0]), float(captured["pass"][5][0])
        out = np.empty((8, steps))

        def run(name: str, f: Callable) -> Callable[[], Any]:  # the same arrays again: the passes write only
            return lambda: f(*captured[name])  # their outputs (ROC's integer adds up over the runs, unread here)

        ratio = np.empty(steps)
        t_sort = best(lambda: np.sort(s), args.repeats)
        t_ap = best(lambda: precall.average_precision(y, s), args.repeats)
        t_ev = best(lambda: precall.evaluate(y, s), args.repeats)
        t_pre = best(run("pre", real_pre), args.repeats)
        t_log = best(lambda: np.log1p(ratio, out=ratio), args.repeats)
        t_pass = best(run("pass", real_pass), args.repeats)
        t_div = best(lambda: eight(tp, fp, dtp, fp_prev, p, q, out), args.repeats)
        per = 1e9 / steps
        budget = (0.2 * t_ap) * per
        print(f"| {rows} | {steps:,} | {t_sort * 1e3:.2f} | {t_ap * 1e3:.2f} | {t_ev * 1e3:.2f} | {t_ev / t_ap:.2f} | "
              f"{t_pre * per:.2f} | {t_log * per:.2f} | {t_pass * per:.2f} | {t_div * per:.2f} | "
              f"{budget:.2f} |", flush=True)


if __name__ == "__main__":
    main()
