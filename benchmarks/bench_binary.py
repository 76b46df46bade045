"""Binary metrics: precall next to scikit-learn, in one process.

Run from the repository root (precall installed, scikit-learn importable)::

    python benchmarks/bench_binary.py --sizes 1e6            # about half a minute
    python benchmarks/bench_binary.py                          # 1e6 and 1e7 (minutes)
    python benchmarks/bench_binary.py --output docs/bench.md   # also write the markdown

For every size ``n`` (10% positives, fixed seed) and every score kind
(float64 / float32, continuous / rounded to 3 decimals, which makes heavy
ties) it times, as the median of ``--repeats`` runs of ``time.perf_counter``:

* ``precall.average_precision`` (method "step") vs ``average_precision_score``;
* ``precall.roc_auc`` vs ``roc_auc_score``;
* both with the same random positive ``sample_weight``;
* ``precall.average_precision(ties="stable")`` vs ``average_precision_score``
  (one point per sample in sorted order; equal to scikit-learn's number only
  when no scores are tied, which is checked);
* ``precall.evaluate`` (all AP conventions, ROC-AUC, best F1) against one
  ``precall.average_precision`` call (target: evaluate / AP <= 1.5), and
  against scikit-learn's ``average_precision_score`` + ``roc_auc_score``
  (the two of those numbers scikit-learn can give).

The two functions of each comparison run interleaved (a, b, a, b, ...), so
both see the same machine load.  It checks that the numbers agree (absolute difference < 1e-9) and measures
the peak extra memory of precall's calls with ``tracemalloc`` (NumPy reports
its allocations to it), relative to ``y_score.nbytes`` (target <= 3).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import sklearn
from sklearn.metrics import average_precision_score, roc_auc_score

import precall

from _timing import peak_memory  # benchmarks/ is on the path when run as a script

TOLERANCE = 1e-9
PREVALENCE = 0.10
EVALUATE_TARGET = 1.5
MEMORY_TARGET = 3.0


# ---------------------------------------------------------------------------
# machine
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_lines() -> list[str]:
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    mem = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem = f"{int(line.split()[1]) / 2**20:.1f} GiB"
                    break
    except OSError:
        pass
    return [
        f"- platform: {platform.platform()}",
        f"- CPU: {cpu_model()}; {os.cpu_count()} logical cores ({usable} usable)"
        + (f"; memory {mem}" if mem else ""),
        f"- Python {platform.python_version()} ({platform.python_implementation()}), "
        f"numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
        f"precall {precall.__version__}",
    ]


# ---------------------------------------------------------------------------
# data
@dataclass(frozen=True)
class Case:
    n: int
    dtype: type
    rounded: bool
    y_true: np.ndarray
    y_score: np.ndarray
    weight: np.ndarray

    @property
    def name(self) -> str:
        kind = "rounded 3 dp" if self.rounded else "continuous"
        return f"n={self.n:.0e} {np.dtype(self.dtype).name} {kind}".replace("e+0", "e")


def make_case(n: int, dtype: type, rounded: bool, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < PREVALENCE).astype(np.int64)
    # a moderately good classifier: probabilities from a shifted logit
    logit = rng.standard_normal(n) + 1.5 * y - 1.0
    score = 1.0 / (1.0 + np.exp(-logit))
    if rounded:
        score = np.round(score, 3)
    weight = rng.uniform(0.5, 2.0, n)
    return Case(n, dtype, rounded, y, score.astype(dtype), weight)


# ---------------------------------------------------------------------------
# measuring
def median_times(funcs: list[Callable[[], Any]], repeats: int) -> list[tuple[float, Any]]:
    """Median wall time (and last value) of each function, the runs interleaved.

    Interleaving (a, b, a, b, ...) exposes every function to the same machine
    load, so the ratios are fairer than timing one function after the other.
    """
    times: list[list[float]] = [[] for _ in funcs]
    values: list[Any] = [None] * len(funcs)
    gc.collect()
    for _ in range(repeats):
        for i, func in enumerate(funcs):
            t0 = time.perf_counter()
            values[i] = func()
            times[i].append(time.perf_counter() - t0)
    return [(statistics.median(t), v) for t, v in zip(times, values)]




@dataclass
class Results:
    rows: list[tuple[str, str, float, float]] = field(default_factory=list)
    evaluate_rows: list[tuple[str, float, float, float]] = field(default_factory=list)
    memory_rows: list[tuple[str, int, dict[str, int]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def check(self, case: str, what: str, a: float, b: float, ours: str, theirs: str) -> None:
        if not abs(a - b) < TOLERANCE:
            self.notes.append(
                f"MISMATCH {case}, {what}: {ours} = {a!r}, {theirs} = {b!r} "
                f"(|diff| = {abs(a - b):.3g} >= {TOLERANCE:g})"
            )


def run_case(case: Case, repeats: int, res: Results) -> None:
    y, s, w = case.y_true, case.y_score, case.weight
    label = case.name

    comparisons: list[tuple[str, Callable[[], float], Callable[[], float], bool]] = [
        ("AP (step)", lambda: precall.average_precision(y, s),
         lambda: average_precision_score(y, s), True),
        ("ROC-AUC", lambda: precall.roc_auc(y, s), lambda: roc_auc_score(y, s), True),
        ("AP weighted", lambda: precall.average_precision(y, s, sample_weight=w),
         lambda: average_precision_score(y, s, sample_weight=w), True),
        ("ROC-AUC weighted", lambda: precall.roc_auc(y, s, sample_weight=w),
         lambda: roc_auc_score(y, s, sample_weight=w), True),
        ("AP ties=stable", lambda: precall.average_precision(y, s, ties="stable"),
         lambda: average_precision_score(y, s), None),  # None: compare only without ties
    ]
    has_ties = None
    sk_values: dict[str, float] = {}
    for what, ours, theirs, compare in comparisons:
        (t_ours, v_ours), (t_theirs, v_theirs) = median_times([ours, theirs], repeats)
        res.rows.append((label, what, t_ours, t_theirs))
        sk_values[what] = v_theirs
        if compare is None:
            if has_ties is None:
                has_ties = np.unique(s).size < s.size
            if has_ties:
                res.notes.append(
                    f"{label}, {what}: scores are tied, so stable AP ({v_ours:.9f}) and "
                    f"scikit-learn's grouped AP ({v_theirs:.9f}) differ by definition; not compared"
                )
                continue
        res.check(label, what, v_ours, v_theirs, "precall", "scikit-learn")

    # evaluate: every convention from one sort, against one AP call
    (t_eval, ev), (t_ap, _) = median_times(
        [lambda: precall.evaluate(y, s), lambda: precall.average_precision(y, s)], repeats
    )
    t_sk_ap = next(r[3] for r in res.rows if r[0] == label and r[1] == "AP (step)")
    t_sk_roc = next(r[3] for r in res.rows if r[0] == label and r[1] == "ROC-AUC")
    res.evaluate_rows.append((label, t_eval, t_ap, t_sk_ap + t_sk_roc))
    res.check(label, "evaluate step AP", ev.average_precision["step"],
              sk_values["AP (step)"], "evaluate", "scikit-learn")
    res.check(label, "evaluate ROC-AUC", ev.roc_auc, sk_values["ROC-AUC"],
              "evaluate", "scikit-learn")

    peaks = {
        "average_precision": peak_memory(lambda: precall.average_precision(y, s)),
        "roc_auc": peak_memory(lambda: precall.roc_auc(y, s)),
        "evaluate": peak_memory(lambda: precall.evaluate(y, s)),
        "AP weighted": peak_memory(lambda: precall.average_precision(y, s, sample_weight=w)),
        "AP ties=stable": peak_memory(lambda: precall.average_precision(y, s, ties="stable")),
        "sklearn AP": peak_memory(lambda: average_precision_score(y, s)),
        "sklearn AP weighted": peak_memory(lambda: average_precision_score(y, s, sample_weight=w)),
    }
    res.memory_rows.append((label, s.nbytes, peaks))


# ---------------------------------------------------------------------------
# report
def markdown(res: Results, header: list[str]) -> str:
    out = list(header)
    out += [
        "",
        "### Time (median of repeats; ratio > 1 means precall is faster)",
        "",
        "| case | metric | precall median s | sklearn median s | ratio (sklearn/precall) |",
        "|---|---|---:|---:|---:|",
    ]
    for case, what, t_ours, t_theirs in res.rows:
        out.append(f"| {case} | {what} | {t_ours:.4f} | {t_theirs:.4f} | {t_theirs / t_ours:.1f} |")
    out += [
        "",
        "### precall.evaluate (6 AP conventions + ROC-AUC + best F1) vs one "
        f"average_precision call (target evaluate/AP <= {EVALUATE_TARGET})",
        "",
        "| case | evaluate s | precall AP s | evaluate/AP | sklearn AP + ROC-AUC s |",
        "|---|---:|---:|---:|---:|",
    ]
    for case, t_eval, t_ap, t_sk in res.evaluate_rows:
        flag = "" if t_eval / t_ap <= EVALUATE_TARGET else " (above target)"
        out.append(
            f"| {case} | {t_eval:.4f} | {t_ap:.4f} | {t_eval / t_ap:.2f}{flag} | {t_sk:.4f} |"
        )
    out += [
        "",
        "### Peak extra memory (tracemalloc) / y_score.nbytes "
        f"(target <= {MEMORY_TARGET:g} for precall)",
        "",
        "| case | y_score MB | average_precision | roc_auc | evaluate | AP weighted | AP ties=stable "
        "| sklearn AP (reference) | sklearn AP weighted (reference) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for case, nbytes, peaks in res.memory_rows:
        cells = []
        for key in ("average_precision", "roc_auc", "evaluate", "AP weighted", "AP ties=stable",
                    "sklearn AP", "sklearn AP weighted"):
            ratio = peaks[key] / nbytes
            ours = not key.startswith("sklearn")
            flag = " (above target)" if ours and ratio > MEMORY_TARGET else ""
            cells.append(f"{ratio:.2f}{flag}")
        out.append(f"| {case} | {nbytes / 1e6:.1f} | " + " | ".join(cells) + " |")
    out += ["", "### Agreement (|precall - sklearn| < 1e-9)", ""]
    mismatches = [n for n in res.notes if n.startswith("MISMATCH")]
    if not mismatches:
        out.append("All compared numbers agree with scikit-learn.")
    out += [f"- {note}" for note in res.notes]
    return "\n".join(out) + "\n"


def parse_sizes(values: list[str]) -> list[int]:
    sizes = []
    for value in values:
        for part in value.split(","):
            if part.strip():
                n = int(float(part))
                if n < 10:
                    raise argparse.ArgumentTypeError(f"size must be at least 10; got {part!r}")
                sizes.append(n)
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", nargs="+", default=["1e6", "1e7"],
                        help="sample sizes, e.g. 1e6 1e7 (default both)")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed runs per measurement (default 5 up to 1e6, 3 above)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--output", metavar="FILE", help="also write the markdown to FILE")
    args = parser.parse_args(argv)
    sizes = parse_sizes(args.sizes)

    header = ["## precall vs scikit-learn: binary metrics", ""] + machine_lines()
    header.append(
        f"- data: {PREVALENCE:.0%} positives, scores = sigmoid(N(0,1) + 1.5 y - 1), "
        f"weights U(0.5, 2), seed {args.seed}"
    )
    print("\n".join(header), flush=True)

    # warm up every code path once on small data (imports, first-call costs)
    warm = make_case(1000, np.float64, False, args.seed)
    run_case(warm, 1, Results())

    res = Results()
    for n in sizes:
        repeats = args.repeats or (5 if n <= 1_000_000 else 3)
        for dtype in (np.float64, np.float32):
            for rounded in (False, True):
                case = make_case(n, dtype, rounded, args.seed)
                t0 = time.perf_counter()
                run_case(case, repeats, res)
                print(f"  ... {case.name}: {time.perf_counter() - t0:.1f} s "
                      f"({repeats} repeats)", file=sys.stderr, flush=True)
                del case
                gc.collect()

    text = markdown(res, header)
    print(text[len("\n".join(header)) + 1 :], end="")
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
