"""Scale: exact AP and ROC-AUC over a large Parquet file, four ways (issue 7's targets).

Writes N rows (float32 scores, 10% positives; default 1e8) to a Parquet file, then
measures, each in a fresh process of its own (time, peak resident memory):
(a) `precall evaluate FILE --stream` style: the file row group by row group through an
exact precall.Accumulator; (b) precall.dask on a LocalCluster with 2 workers; (c)
in-memory precall (the whole columns loaded); (d) scikit-learn in memory (optional,
--sklearn). Also the binned accumulator (1e4 bins) against the exact values.

    python benchmarks/bench_scale.py [--rows 1e8] [--sklearn] [--output FILE] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

import precall
from _timing import emit


def write_data(path: str, rows: int, seed: int = 0, group: int = 1 << 22) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    writer = None
    for start in range(0, rows, group):
        m = min(group, rows - start)
        y = (rng.random(m) < 0.1).astype(np.int8)
        s = (1.0 / (1.0 + np.exp(-(rng.normal(size=m) + 1.5 * y - 1.0)))).astype(np.float32)
        table = pa.table({"y": y, "score": s})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table)
    writer.close()


def _load(path: str) -> tuple[np.ndarray, np.ndarray]:
    import pyarrow.parquet as pq

    t = pq.read_table(path, columns=["y", "score"])
    return t.column("y").to_numpy(), t.column("score").to_numpy()


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(mode: str, path: str) -> dict:
    t0 = time.perf_counter()
    if mode == "stream":
        import pyarrow.parquet as pq

        acc = precall.Accumulator()
        pf = pq.ParquetFile(path)
        for g in range(pf.num_row_groups):
            t = pf.read_row_group(g, columns=["y", "score"])
            acc.update(t.column("y").to_numpy(), t.column("score").to_numpy())
        ev = acc.evaluate()  # every convention, from the state's steps (the full table is never built)
        out = {"ap": ev.average_precision["step"], "roc_auc": ev.roc_auc, "distinct": acc.n_distinct}
    elif mode == "binned":
        import pyarrow.parquet as pq

        acc = precall.Accumulator(bins=10_000, score_range=(0.0, 1.0))
        pf = pq.ParquetFile(path)
        for g in range(pf.num_row_groups):
            t = pf.read_row_group(g, columns=["y", "score"])
            acc.update(t.column("y").to_numpy(), t.column("score").to_numpy())
        ap, auc = acc.average_precision(), acc.roc_auc()
        out = {"ap": ap.value, "ap_low": ap.low, "ap_high": ap.high, "roc_auc": auc.value,
               "roc_low": auc.low, "roc_high": auc.high}
    elif mode == "dask":
        import dask.dataframe as dd
        import distributed

        import precall.dask as pdask

        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            t0 = time.perf_counter()  # the cluster's start-up is not the evaluation
            ddf = dd.read_parquet(path, columns=["y", "score"], split_row_groups=8)  # 8M-row partitions
            ev = pdask.evaluate(ddf["y"], ddf["score"])  # score ranges, one per partition
            out = {"ap": ev.average_precision["step"], "roc_auc": ev.roc_auc, "partitions": ddf.npartitions,
                   "worker_peak_mib": max(client.run(_peak_mib).values())}
    elif mode == "memory":
        y, s = _load(path)
        ev = precall.evaluate(y, s)  # one sort: every convention, ROC-AUC (as the other modes)
        out = {"ap": ev.average_precision["step"], "roc_auc": ev.roc_auc}
    elif mode == "sklearn":
        from sklearn.metrics import average_precision_score, roc_auc_score

        y, s = _load(path)
        out = {"ap": float(average_precision_score(y, s)), "roc_auc": float(roc_auc_score(y, s))}
    else:
        raise ValueError(mode)
    out["time"] = time.perf_counter() - t0
    out["peak_mib"] = _peak_mib()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=1e8)
    parser.add_argument("--sklearn", action="store_true", help="also run scikit-learn in memory")
    parser.add_argument("--dir", help="where to write the Parquet file (default: a temporary folder)")
    parser.add_argument("--output", help="also write the markdown table here")
    parser.add_argument("--mode", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.mode:
        print(json.dumps(run(args.mode, args.path)))
        return 0
    rows = int(args.rows)
    folder = args.dir or tempfile.mkdtemp(prefix="precall-scale-")
    path = os.path.join(folder, f"scores_{rows}.parquet")
    if not os.path.exists(path):
        t0 = time.perf_counter()
        write_data(path, rows)
        print(f"  wrote {path} ({os.path.getsize(path) / 2**20:.0f} MiB) in {time.perf_counter() - t0:.0f} s",
              flush=True)
    modes = ["stream", "binned", "dask", "memory"] + (["sklearn"] if args.sklearn else [])
    results = {}
    for mode in modes:
        proc = subprocess.run([sys.executable, __file__, "--mode", mode, "--path", path], capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0:
            print(f"  {mode}: failed\n{proc.stderr[-2000:]}", flush=True)
            continue
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"  {mode}: {results[mode]}", flush=True)
    exact = results.get("memory", {})
    rows_md = []
    for mode, r in results.items():
        diff = max(abs(r["ap"] - exact.get("ap", r["ap"])), abs(r["roc_auc"] - exact.get("roc_auc", r["roc_auc"])))
        extra = ""
        if mode == "binned":
            extra = (f"AP in [{r['ap_low']:.6f}, {r['ap_high']:.6f}], ROC-AUC in [{r['roc_low']:.6f}, "
                     f"{r['roc_high']:.6f}]")
        elif mode == "stream":
            extra = f"{r['distinct']} distinct scores"
        elif mode == "dask":
            extra = (f"{r['partitions']} partitions = score ranges; peak of the larger worker "
                     f"{r['worker_peak_mib']:.0f} MiB (the peak column is the client's)")
        rows_md.append(f"| {mode} | {r['time']:.1f} | {r['peak_mib']:.0f} | {r['ap']:.9f} | {r['roc_auc']:.9f} | "
                       f"{diff:.1e} | {extra} |")
    lines = [
        "## Scale: exact AP / ROC-AUC over a Parquet file",
        "",
        f"- {platform.platform()}; Python {platform.python_version()}, numpy {np.__version__}, precall "
        f"{precall.__version__}; {rows:.0e} rows (float32 scores, 10% positives, seed 0), each mode in its own "
        "process; peak = the process's maximum resident set",
        "",
        "| mode | time s | peak MiB | step AP | ROC-AUC | max abs diff vs in-memory | note |",
        "|---|---:|---:|---:|---:|---:|---|",
        *rows_md,
    ]
    emit(lines, args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
