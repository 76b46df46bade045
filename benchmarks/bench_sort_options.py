"""The routes to the steps of unweighted binary input, measured against each other in one run.

Run from the repository root (numba installed)::

    python benchmarks/bench_sort_options.py --n 1e7 --rounds 3

Each route gives the steps of validated input (validation excluded; best CPU time of
interleaved rounds; ratios to ``np.sort`` of the scores from the same rounds):

* ``numpy split`` (the numpy route, the default without numba): positives and negatives
  gathered apart, two ``np.sort``, distinct positive scores and ``searchsorted``;
* ``numpy tagged``: label-tagged keys (``|score|`` bits << 1 | label, made by numpy),
  one ``np.sort``, then the steps by numpy (run ends, ``cumsum``), no compiled code;
* ``numba tagged, np.sort``: the keys made by numpy and sorted by ``np.sort``, the pass compiled
  (the compiled route's sort until 2026-11-28);
* ``numba tagged`` (the compiled route): the keys tagged and sorted by the compiled
  ``tag_sort_floats`` (most significant differing digit first, buckets sorted in place);
* ``numba split + merge`` is not offered: the tagged route needs one sort, not two.
"""

from __future__ import annotations

import argparse
import gc
import time

import numpy as np

from precall._core import backend
from precall._core.steps import compiled_steps, steps_from_sorted, tagged_steps
from precall._core.sort import sorted_split
from precall._core.validate import check_binary


def numpy_tagged(scores: np.ndarray, positive: np.ndarray):
    """The grouped steps from label-tagged keys, numpy only (non-negative float64 scores)."""
    key = scores.view(np.uint64) << np.uint64(1)
    key |= positive
    key.sort()
    key = key[::-1]
    value = key >> np.uint64(1)
    label = (key & np.uint64(1)).astype(bool)
    n = key.shape[0]
    ends = np.append(np.flatnonzero(value[1:] != value[:-1]), n - 1)
    tp_all = np.cumsum(label)
    tp = tp_all[ends]
    fp = ends + 1 - tp
    prev_tp = np.append(0, tp[:-1])
    prev_fp = np.append(0, fp[:-1])
    step = tp > prev_tp
    return value[ends[step]].view(np.float64), tp[step], tp[step] - prev_tp[step], fp[step], prev_fp[step]


def tagged_np_sort(data, module):
    """The compiled route with ``np.sort`` in place of the radix sort: the label-tagged keys made
    by numpy (the benchmark's scores are non-negative: every key is in the front part), one
    ``np.sort``, the compiled pass."""
    wide = data.scores.dtype.itemsize == 8
    key = data.scores.view(np.uint64 if wide else np.uint32) << (np.uint64(1) if wide else np.uint32(1))
    key |= data.positive
    key.sort()
    return tagged_steps(data, (key, int(key.shape[0])), "group", module)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="1e7")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    n = int(float(args.n))
    backend.set_kernel("numba")
    module = backend.compiled(n)
    print("| positives | dtype | np.sort s | numpy split / sort | numpy tagged / sort | numba tagged, np.sort / sort "
          "| numba tagged (radix) / sort |")
    print("|---|---|---|---|---|---|---|")
    for prevalence in (0.01, 0.1, 0.3, 0.5):
        for dtype in (np.float64, np.float32):
            rng = np.random.default_rng(0)
            y = rng.random(n) < prevalence
            s = (1.0 / (1.0 + np.exp(-(rng.standard_normal(n) + 1.5 * y - 1.0)))).astype(dtype)
            data = check_binary(y, s)
            compiled_steps(check_binary(y[:1000], s[:1000]), "group")  # load the compiled code
            funcs = {
                "sort": lambda: np.sort(s),
                "split": lambda: steps_from_sorted(*sorted_split(data), "group"),
                "tagged": lambda: numpy_tagged(data.scores, data.positive),
                "np.sort": lambda: tagged_np_sort(data, module),
                "numba": lambda: compiled_steps(data, "group"),
            }
            if dtype == np.float32:
                del funcs["tagged"]  # written for float64 bits
            times = {k: [] for k in funcs}
            out = {}
            for _ in range(args.rounds):
                for k, f in funcs.items():
                    gc.collect()
                    t0 = time.process_time()
                    out[k] = f()
                    times[k].append(time.process_time() - t0)
            best = {k: min(v) for k, v in times.items()}
            ref = out["split"]
            assert np.array_equal(out["numba"][0].tp, ref.tp) and np.array_equal(out["np.sort"].tp, ref.tp)
            if "tagged" in out:
                assert np.array_equal(out["tagged"][1], ref.tp[0])
            tagged = f"{best['tagged'] / best['sort']:.2f}" if "tagged" in best else "-"
            print(f"| {prevalence:.0%} | {np.dtype(dtype).name} | {best['sort']:.3f} | {best['split'] / best['sort']:.2f} | "
                  f"{tagged} | {best['np.sort'] / best['sort']:.2f} | {best['numba'] / best['sort']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
