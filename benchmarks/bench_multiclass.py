"""precall vs scikit-learn on multi-class and multi-label input (issue 3's speed targets).

Cases: n = 1e6 samples x k = 100 classes (multi-label indicator and multi-class
labels): macro AP and one-vs-rest macro ROC-AUC; multi-label ``average="samples"``
AP on the first 2e4 rows (scikit-learn loops over the rows); n = 2e5 x k = 20 multi-class:
one-vs-one (Hand & Till) ROC-AUC.  Both libraries run in one process on the same
arrays; medians of --repeats runs (alternating); ratio = sklearn / precall.

    python benchmarks/bench_multiclass.py [--scale 0.1] [--repeats 1] [--output FILE]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
import warnings
from typing import Any, Callable

import numpy as np
import sklearn
from sklearn.metrics import average_precision_score, roc_auc_score

import precall
from _timing import emit, median_time


def _softmax(z: np.ndarray) -> np.ndarray:
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def _interleaved(a: Callable[[], Any], b: Callable[[], Any], repeats: int
                 ) -> tuple[tuple[float, float], tuple[float, float]]:
    """(median wall, median CPU time) of ``a`` and of ``b``, called alternately."""
    times: list[list[tuple[float, float]]] = [[], []]
    for _ in range(repeats):
        for fn, out in ((a, times[0]), (b, times[1])):
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            out.append((time.perf_counter() - w0, time.process_time() - c0))
    return tuple(  # type: ignore[return-value]
        (statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts)) for ts in times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the sample sizes")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--output", help="also write the markdown table here")
    parser.add_argument("--evaluate-only", action="store_true",
                        help="only the multi-class evaluate line (issue 14's target)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    rows: list[tuple[str, float, float, float]] = []

    # issue 14: the multi-class evaluation of `precall evaluate --class-columns` (precall.evaluate on 2-D
    # scores: every convention per class, macro / weighted / micro, OvO) against building each class's table
    # and evaluating it (target: at most 1.5x).  The two are interleaved (drift and other load hit both
    # alike); medians of wall and of CPU time are reported.
    n3, k3 = int(2e5 * args.scale), 10
    y3 = rng.integers(0, k3, n3)
    s3 = _softmax(rng.normal(size=(n3, k3)) + 1.5 * np.eye(k3)[y3])
    t_multi, t_tables = _interleaved(
        lambda: precall.evaluate(y3, s3),
        lambda: [t.evaluate() for t in precall.per_class_tables(y3, s3).values()], max(args.repeats, 9))
    print(f"  multi-class evaluate n={n3:.0e} k={k3}: wall {t_multi[0]:.3f} s, CPU {t_multi[1]:.3f} s; "
          f"per_class_tables + evaluate wall {t_tables[0]:.3f} s, CPU {t_tables[1]:.3f} s; ratio wall "
          f"{t_multi[0] / t_tables[0]:.2f}, CPU {t_multi[1] / t_tables[1]:.2f} (target <= 1.5)", flush=True)
    if args.evaluate_only:
        return 0


    def compare(name: str, ours: Callable[[], Any], theirs: Callable[[], Any]) -> None:
        with warnings.catch_warnings():  # rows without positives warn in both libraries
            warnings.simplefilter("ignore")
            t_ours, v_ours = median_time(ours, args.repeats)
            t_theirs, v_theirs = median_time(theirs, args.repeats)
        diff = float(np.max(np.abs(np.asarray(v_ours) - np.asarray(v_theirs))))
        rows.append((name, t_ours, t_theirs, diff))
        print(f"  {name}: precall {t_ours:.3f} s, sklearn {t_theirs:.3f} s, "
              f"ratio {t_theirs / t_ours:.1f}, |diff| {diff:.1e}", flush=True)

    n, k = int(1e6 * args.scale), 100
    y_ml = (rng.random((n, k)) < 0.05).astype(np.int8)
    s_ml = np.round(rng.random((n, k)) + 0.3 * y_ml, 3)
    compare(f"multi-label n={n:.0e} k={k}: macro AP",
            lambda: precall.average_precision(y_ml, s_ml),
            lambda: average_precision_score(y_ml, s_ml))
    compare(f"multi-label n={n:.0e} k={k}: macro ROC-AUC",
            lambda: precall.roc_auc(y_ml, s_ml), lambda: roc_auc_score(y_ml, s_ml))
    n_s = int(2e4 * args.scale)  # scikit-learn loops over rows: kept small
    compare(f"multi-label n={n_s:.0e} k={k}: samples AP",
            lambda: precall.average_precision(y_ml[:n_s], s_ml[:n_s], average="samples"),
            lambda: average_precision_score(y_ml[:n_s], s_ml[:n_s], average="samples"))
    del y_ml, s_ml
    y_mc = rng.integers(0, k, n)
    s_mc = _softmax(rng.normal(size=(n, k)) + 2.0 * np.eye(k)[y_mc])
    compare(f"multi-class n={n:.0e} k={k}: macro AP",
            lambda: precall.average_precision(y_mc, s_mc),
            lambda: average_precision_score(y_mc, s_mc))
    compare(f"multi-class n={n:.0e} k={k}: OvR macro ROC-AUC",
            lambda: precall.roc_auc(y_mc, s_mc, multi_class="ovr"),
            lambda: roc_auc_score(y_mc, s_mc, multi_class="ovr"))
    del y_mc, s_mc
    n2, k2 = int(2e5 * args.scale), 20
    y2 = rng.integers(0, k2, n2)
    s2 = _softmax(rng.normal(size=(n2, k2)) + 1.5 * np.eye(k2)[y2])
    compare(f"multi-class n={n2:.0e} k={k2}: OvO macro ROC-AUC",
            lambda: precall.roc_auc(y2, s2, multi_class="ovo"),
            lambda: roc_auc_score(y2, s2, multi_class="ovo"))

    lines = [
        "## precall vs scikit-learn: multi-class and multi-label",
        "",
        f"- {platform.platform()}; Python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}, precall {precall.__version__}; repeats {args.repeats}",
        "",
        "| case | precall s | sklearn s | ratio (sklearn/precall) | max abs diff |",
        "|---|---:|---:|---:|---:|",
    ]
    lines += [f"| {c} | {a:.3f} | {b:.3f} | {b / a:.1f} | {d:.1e} |" for c, a, b, d in rows]
    lines += ["", f"Multi-class `precall.evaluate` (what `precall evaluate --class-columns` runs), n={n3:.0e} "
              f"k={k3}: {t_multi[0]:.3f} s against per_class_tables + evaluate {t_tables[0]:.3f} s: "
              f"{t_multi[0] / t_tables[0]:.2f}x wall, {t_multi[1] / t_tables[1]:.2f}x CPU time (target <= 1.5x)."]
    emit(lines, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
