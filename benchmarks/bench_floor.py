"""Binary AP and ROC-AUC against the sort floor, scikit-learn and torchmetrics (CPU), in one run.

Run from the repository root (precall importable; scikit-learn, torchmetrics, numba)::

    python benchmarks/bench_floor.py --sizes 1e5 1e6 1e7 --rounds 3
    python benchmarks/bench_floor.py --sizes 1e8 --rounds 1 --only precall,sort,sklearn --prevalences 0.01 0.3
    python benchmarks/bench_floor.py ... --output docs/floor.md
    python benchmarks/bench_floor.py --sizes 1e6 1e7 --float32 1e6 1e7 --only precall,sort --ties stable

For every size and prevalence (1%, 10%, 30%, 50%; float64 scores from a shifted logit,
so almost every score is distinct; float32 at ``--float32`` sizes) each function runs in
``--rounds`` interleaved rounds (a, b, c, a, b, c, ...), and the table gives the best CPU
time (``time.process_time``: the host is shared, its wall clock is not) and every ratio
from those same rounds:

* ``np.sort`` of the scores: the floor;
* precall ``average_precision`` (step), ``roc_auc`` and ``evaluate`` with the compiled
  kernel (``set_kernel("numba")``) and ``average_precision`` and ``evaluate`` with numpy
  (``set_kernel("numpy")``, the README's install);
* scikit-learn ``average_precision_score`` and ``roc_auc_score``;
* torchmetrics ``binary_average_precision`` (exact, ``thresholds=None``) on CPU tensors,
  one torch thread (like the others); its result is a float32 tensor (checked to 1e-6);
* ``evaluate`` / AP again, timed alone in turns (:func:`paired_ratio`): in the interleaved
  rounds each call's arrays land in memory the other functions freed or in freshly mapped
  pages, which moves single calls by up to 2x on this kind of host;
* weighted (U(0.5, 2) weights, 10% positives, or each of ``--weighted-prevalences``): precall's
  AP and ROC-AUC (both kernels) against scikit-learn's.

``--ties stable`` gives precall's AP and ``evaluate`` stable ties (ROC-AUC groups them whatever
``ties`` is); scikit-learn and torchmetrics group ties, so their values are not compared then.

It checks that precall's two kernels agree bit for bit, and with scikit-learn to 1e-9;
measures the peak traced memory of one call (``tracemalloc``, as a multiple of the score
bytes) and the growth exponent ``log(t2 / t1) / log(n2 / n1)`` between consecutive sizes.
"""

from __future__ import annotations

import argparse
import gc
import math
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

import precall
from precall._core import backend

from _timing import peak_memory  # benchmarks/ is on the path when run as a script

PREVALENCES = (0.01, 0.10, 0.30, 0.50)


def make(n: int, prevalence: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    score = 1.0 / (1.0 + np.exp(-(rng.standard_normal(n) + 1.5 * y - 1.0)))
    return y, score, rng.uniform(0.5, 2.0, n)


def best_cpu(funcs: dict[str, Callable[[], Any]], rounds: int) -> tuple[dict[str, float], dict[str, Any]]:
    """Best CPU time of each function over interleaved rounds, and its value."""
    times: dict[str, list[float]] = {k: [] for k in funcs}
    values: dict[str, Any] = {}
    for _ in range(rounds):
        for name, f in funcs.items():
            gc.collect()
            t0 = time.process_time()
            values[name] = f()
            times[name].append(time.process_time() - t0)
    return {k: min(v) for k, v in times.items()}, values


def paired_ratio(y: np.ndarray, s: np.ndarray, rounds: int, ties: str = "group") -> float:
    """``evaluate`` / AP timed alone in turns (AP, evaluate, AP, ...; compiled kernel, no other
    function and no ``gc.collect()`` between them), the ratio of the best CPU times: what
    ``evaluate`` adds to one AP, without the page faults of the other functions' arrays moving it."""
    backend.set_kernel("numba")
    ap: list[float] = []
    ev: list[float] = []
    for _ in range(rounds):
        for f, out in ((precall.average_precision, ap), (precall.evaluate, ev)):
            t0 = time.process_time()
            f(y, s, ties=ties)
            out.append(time.process_time() - t0)
    return min(ev) / min(ap)


def with_kernel(name: str, f: Callable[[], Any]) -> Callable[[], Any]:
    def run() -> Any:
        backend.set_kernel(name)
        return f()
    return run


def functions(y: np.ndarray, s: np.ndarray, only: set[str], ties: str = "group") -> dict[str, Callable[[], Any]]:
    out: dict[str, Callable[[], Any]] = {}
    if "sort" in only:
        out["np.sort"] = lambda: np.sort(s)
    if "precall" in only:
        out["AP numba"] = with_kernel("numba", lambda: precall.average_precision(y, s, ties=ties))
        out["AP numpy"] = with_kernel("numpy", lambda: precall.average_precision(y, s, ties=ties))
        out["ROC numba"] = with_kernel("numba", lambda: precall.roc_auc(y, s))
        out["evaluate numba"] = with_kernel("numba", lambda: precall.evaluate(y, s, ties=ties))
        out["evaluate numpy"] = with_kernel("numpy", lambda: precall.evaluate(y, s, ties=ties))
    if "sklearn" in only:
        from sklearn.metrics import average_precision_score, roc_auc_score
        out["sklearn AP"] = lambda: average_precision_score(y, s)
        out["sklearn ROC"] = lambda: roc_auc_score(y, s)
    if "torchmetrics" in only:
        import torch
        from torchmetrics.functional.classification import binary_average_precision
        torch.set_num_threads(1)
        ty, ts = torch.from_numpy(y.astype(np.int64)), torch.from_numpy(s)
        out["torchmetrics AP"] = lambda: float(binary_average_precision(ts, ty, thresholds=None))
    return out


def weighted_functions(y: np.ndarray, s: np.ndarray, w: np.ndarray, only: set[str]) -> dict[str, Callable[[], Any]]:
    out: dict[str, Callable[[], Any]] = {}
    if "precall" in only:
        for k in ("numba", "numpy"):
            out[f"wAP {k}"] = with_kernel(k, lambda: precall.average_precision(y, s, sample_weight=w))
            out[f"wROC {k}"] = with_kernel(k, lambda: precall.roc_auc(y, s, sample_weight=w))
    if "sklearn" in only:
        from sklearn.metrics import average_precision_score, roc_auc_score
        out["sklearn wAP"] = lambda: average_precision_score(y, s, sample_weight=w)
        out["sklearn wROC"] = lambda: roc_auc_score(y, s, sample_weight=w)
    return out


def check(values: dict[str, Any], ties: str = "group") -> str:
    notes = []
    for a, b in (("AP numba", "AP numpy"), ("wAP numba", "wAP numpy"), ("wROC numba", "wROC numpy"),
                 ("evaluate numba", "evaluate numpy")):
        if a in values and b in values and repr(values[a]) != repr(values[b]):
            notes.append(f"{a} != {b}")
    for a, b in (("AP numba", "sklearn AP"), ("ROC numba", "sklearn ROC"), ("wAP numba", "sklearn wAP"),
                 ("wROC numba", "sklearn wROC"), ("AP numba", "torchmetrics AP")):
        if ties == "stable" and a == "AP numba":  # the references group ties
            continue
        if a in values and b in values and not abs(values[a] - values[b]) < (1e-6 if "torch" in b else 1e-9):
            notes.append(f"{a} vs {b}: {values[a]!r} {values[b]!r}")
    return "; ".join(notes) or "ok"


def first_call_latency() -> list[str]:
    """Wall time of a fresh process: import precall, one AP of 1000 rows, for each kernel."""
    code = ("import time; t=time.perf_counter(); import numpy as np, precall; precall.set_kernel('{k}'); "
            "y=np.arange(1000)%3==0; s=np.linspace(0,1,1000); precall.average_precision(y,s); "
            "print(time.perf_counter()-t)")
    lines = []
    for k in ("numpy", "numba", "numpy", "numba"):
        out = subprocess.run([sys.executable, "-c", code.format(k=k)], capture_output=True, text=True, check=True)
        lines.append(f"{k}: {float(out.stdout):.3f} s")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["1e5", "1e6", "1e7"])
    ap.add_argument("--prevalences", nargs="+", type=float, default=list(PREVALENCES))
    ap.add_argument("--float32", nargs="*", default=["1e7"], help="sizes also run with float32 scores")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="precall,sort,sklearn,torchmetrics")
    ap.add_argument("--no-weighted", action="store_true")
    ap.add_argument("--weighted-prevalences", nargs="+", type=float, default=[0.10])
    ap.add_argument("--latency", action="store_true", help="also the first call in a fresh process")
    ap.add_argument("--ties", choices=["group", "stable"], default="group", help="precall's tie rule for AP and evaluate")
    ap.add_argument("--output")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    sizes = [int(float(x)) for x in args.sizes]
    f32 = {int(float(x)) for x in args.float32}
    lines = ["| n | dtype | positives | np.sort s | AP numba / sort | AP numpy / sort | ROC numba / sort | "
             "evaluate / AP | evaluate / AP in turns | evaluate / AP numpy | sklearn AP / AP | sklearn ROC / ROC | "
             "torchmetrics AP / AP | peak AP / score bytes | check |", "|" + "---|" * 15]
    growth: dict[tuple[str, str, float], list[tuple[int, float]]] = {}
    wlines = ["| n | positives | wAP numba s | wAP numpy s | sklearn wAP s | sklearn / numba AP | sklearn / numba ROC | "
              "sklearn / numpy AP | check |", "|" + "---|" * 9]
    backend.set_kernel("numba")
    for dtype in (np.float64, np.float32):  # compile (or load from numba's cache) every kernel timed below, so
        y, s, w = make(2000, 0.3)           # a fresh clone's first round does not count numba's compilation
        s = s.astype(dtype)
        for f in (precall.average_precision, precall.evaluate):
            f(y, s, ties=args.ties)
        precall.roc_auc(y, s)
        for f in (precall.average_precision, precall.roc_auc):
            f(y, s, sample_weight=w)
    for n in sizes:
        for dtype in ([np.float64, np.float32] if n in f32 else [np.float64]):
            for prev in args.prevalences:
                y, s64, w = make(n, prev)
                s = s64.astype(dtype)
                del s64
                t, v = best_cpu(functions(y, s, only, args.ties), args.rounds)
                mem = pair = ""
                if "precall" in only:
                    pair = f"{paired_ratio(y, s, max(2 * args.rounds, 9), args.ties):.2f}"
                    backend.set_kernel("numba")
                    mem = f"{peak_memory(lambda: precall.average_precision(y, s, ties=args.ties)) / s.nbytes:.2f}"
                name = np.dtype(dtype).name
                for k, sec in t.items():
                    growth.setdefault((k, name, prev), []).append((n, sec))

                def r(a: str, b: str) -> str:
                    return f"{t[a] / t[b]:.2f}" if a in t and b in t else ""
                lines.append(f"| {n:.0e} | {name} | {prev:.0%} | {t.get('np.sort', float('nan')):.3f} | "
                             f"{r('AP numba', 'np.sort')} | {r('AP numpy', 'np.sort')} | {r('ROC numba', 'np.sort')} | "
                             f"{r('evaluate numba', 'AP numba')} | {pair} | {r('evaluate numpy', 'AP numpy')} | "
                             f"{r('sklearn AP', 'AP numba')} | "
                             f"{r('sklearn ROC', 'ROC numba')} | {r('torchmetrics AP', 'AP numba')} | {mem} | "
                             f"{check(v, args.ties)} |")
                print(lines[-1], flush=True)
            for prev in ([] if args.no_weighted or dtype != np.float64 else args.weighted_prevalences):
                y, s, w = make(n, prev)
                t, v = best_cpu(weighted_functions(y, s, w, only), args.rounds)

                def r2(a: str, b: str) -> str:
                    return f"{t[a] / t[b]:.2f}" if a in t and b in t else ""
                wlines.append(f"| {n:.0e} | {prev:.0%} | {t.get('wAP numba', float('nan')):.3f} | "
                              f"{t.get('wAP numpy', float('nan')):.3f} | {t.get('sklearn wAP', float('nan')):.3f} | "
                              f"{r2('sklearn wAP', 'wAP numba')} | {r2('sklearn wROC', 'wROC numba')} | "
                              f"{r2('sklearn wAP', 'wAP numpy')} | {check(v)} |")
                print(wlines[-1], flush=True)
    glines = ["| function | dtype | positives | sizes | exponent |", "|---|---|---|---|---|"]
    for (k, name, prev), pts in sorted(growth.items()):
        for (n1, t1), (n2, t2) in zip(pts, pts[1:]):
            glines.append(f"| {k} | {name} | {prev:.0%} | {n1:.0e}-{n2:.0e} | "
                          f"{math.log(t2 / t1) / math.log(n2 / n1):.2f} |")
    out = [f"## Binary AP and ROC-AUC, {args.ties} ties (CPU s, best of interleaved rounds; ratios from the same rounds)",
           "",
           *lines, "", "## Weighted (U(0.5, 2) weights, float64)", "", *wlines, "",
           "## Growth exponents", "", *glines]
    if args.latency:
        out += ["", "## First call in a fresh process (import + 1000-row AP, wall s)", "", *first_call_latency()]
    text = "\n".join(out) + "\n"
    print(text)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
