"""Page faults and time of AP, ROC-AUC and ``evaluate`` with the compiled kernel, per call, in fresh processes.

Run from the repository root (numba installed)::

    python benchmarks/bench_faults.py --sizes 1e6 3e6 --prevalences 0.1 0.5
    python benchmarks/bench_faults.py --src /path/to/old/src --src src   # two versions, same run

A first write to fresh memory takes a page fault (``ru_minflt``) for each 4 KiB page (one per 2 MiB where
the kernel gives huge pages); on a virtual machine each costs about 2 us, as much as AP's work on a few
hundred rows.  Whether a call's arrays are fresh depends on what the C allocator kept from earlier calls,
so each function on each case runs in its own process (every ``--src`` in turn, ``--rounds`` times) and
gives:

* ``first``: one call after a warm-up on 40,000 rows (the passes loaded, the input new to the
  allocator): a command-line run or a notebook's first call;
* ``then``: the best of ``--repeats`` further calls of the same function, one after another (a loop);

``--layout data-first`` makes the case's arrays before the warm-up call and keeps the warm-up's (a script
that loads its data, then calls): the heap then lies otherwise, and before the blocks kept between calls
(``precall._core.scratch``) glibc gave a loop's memory back on every call in that layout but not in the
default one.

each as CPU ms (``time.process_time``: the host is shared) and the faults of that call (the median for
``then``).  The rows give the best ``first`` and ``then`` over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from _timing import emit  # benchmarks/ is on the path when run as a script

CHILD = r"""
import json, resource, sys, time
import numpy as np
sys.path.insert(0, "benchmarks")
import precall
from precall._core import backend
from bench_floor import make
backend.set_kernel("numba")
name, kind, n, prevalence, dtype, repeats, layout = sys.argv[1:8]
f = {"AP": precall.average_precision, "ROC": precall.roc_auc, "evaluate": precall.evaluate}[name]
def case(rows, seed):
    y, s, w = make(rows, float(prevalence), seed)
    return y, s.astype(dtype), {"group": {}, "stable": {"ties": "stable"}, "weighted": {"sample_weight": w}}[kind]
if layout == "data-first":  # the data made before the warm-up, kept through it (a script that loads, then calls)
    y, s, kw = case(int(float(n)), 0)
    y0, s0, kw0 = case(40_000, 1)
    f(y0, s0, **kw0)
else:
    y, s, kw = case(40_000, 1)
    f(y, s, **kw)  # the passes loaded
    y, s, kw = case(int(float(n)), 0)
calls = []
for _ in range(1 + int(repeats)):
    f0, t0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
    f(y, s, **kw)
    calls.append((time.process_time() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0))
rest = calls[1:]
print(json.dumps({"first": calls[0], "then": (min(c[0] for c in rest), sorted(c[1] for c in rest)[len(rest) // 2])}))
"""


def run(src: str, name: str, kind: str, n: str, prevalence: float, dtype: str, repeats: int, layout: str) -> dict:
    """One function on one case in a fresh process: its first call's and later calls' CPU time and faults."""
    env = dict(os.environ, PYTHONPATH=src)
    argv = [sys.executable, "-c", CHILD, name, kind, n, str(prevalence), dtype, str(repeats), layout]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["1e6", "3e6"])
    ap.add_argument("--prevalences", nargs="+", type=float, default=[0.1, 0.5])
    ap.add_argument("--dtypes", nargs="+", default=["float32", "float64"])
    ap.add_argument("--kinds", nargs="+", default=["group", "stable", "weighted"])
    ap.add_argument("--calls", nargs="+", default=["AP", "ROC", "evaluate"])
    ap.add_argument("--src", action="append", help="a version's src directory (PYTHONPATH); default: src")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--layout", choices=["warm-up-first", "data-first"], default="warm-up-first",
                    help="data-first: the case's arrays made before the warm-up call, which keeps its own")
    ap.add_argument("--output")
    args = ap.parse_args()
    sources = args.src or ["src"]
    lines = ["| version | ties / weights | n | dtype | positives | call | first ms | faults | then ms | faults |",
             "|---|---|---:|---|---:|---|---:|---:|---:|---:|"]
    for kind in args.kinds:
        for n in args.sizes:
            for dtype in args.dtypes:
                for prevalence in args.prevalences:
                    names = [x for x in args.calls if not (kind == "stable" and x == "ROC")]  # ROC groups ties
                    best: dict[str, dict] = {src: {} for src in sources}
                    for _ in range(args.rounds):
                        for name in names:
                            for src in sources:  # the versions in turn
                                r = run(src, name, kind, n, prevalence, dtype, args.repeats, args.layout)
                                old = best[src].get(name)
                                first = min(old["first"], r["first"]) if old else r["first"]
                                then = min(old["then"], r["then"]) if old else r["then"]
                                best[src][name] = {"first": first, "then": then}
                    start = len(lines)
                    for src in sources:
                        for name, r in best[src].items():
                            lines.append(f"| {src} | {kind} | {n} | {dtype} | {prevalence:.0%} | {name} | "
                                         f"{r['first'][0] * 1e3:.1f} | {r['first'][1]} | {r['then'][0] * 1e3:.1f} | "
                                         f"{r['then'][1]} |")
                    print("\n".join(lines[start:]), file=sys.stderr, flush=True)  # progress
    emit(lines, args.output)


if __name__ == "__main__":
    main()
