"""``precall evaluate`` on a large file against ``pandas.read_csv`` + ``precall.evaluate``.

Writes a CSV of ``--rows`` rows and three columns (a 0/1 label, two models' scores)
and the same table as Parquet, then runs, each as a fresh subprocess (so the time
includes starting Python and the imports, and the peak RSS is that process's own):

* ``pandas.read_csv`` + ``precall.evaluate`` (the reference), and the same from Parquet;
* ``precall evaluate FILE --label y --score p`` (pyarrow's CSV reader);
* the same without pyarrow (numpy's ``loadtxt``: pyarrow made unimportable);
* ``precall evaluate FILE --label y --score p --stream`` (chunks through ``precall.Accumulator``).

The cases run round-robin ``--repeats`` times (the machine may be shared: compare
within one run); the table shows the median time, the largest peak RSS and the ratio
to the reference of the same format.  Run from the repository root::

    python benchmarks/bench_cli.py                      # 5e6 rows, 3 repeats
    python benchmarks/bench_cli.py --rows 1e6 --repeats 5 --output cli.md
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import emit  # noqa: E402

PANDAS = """
import sys, pandas, precall
path = sys.argv[1]
frame = pandas.read_parquet(path, columns=["y", "p"]) if path.endswith(".parquet") else pandas.read_csv(path)
precall.evaluate(frame["y"].to_numpy(), frame["p"].to_numpy(), pos_label=1)

def _peak():
    try:
        with open("/proc/self/status") as fh:  # this process image's high-water mark (not the parent's)
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
sys.stderr.write(f"\\nPEAK {_peak()}\\n")
"""

CLI = """
import sys
if sys.argv[1] == "no-pyarrow":
    sys.modules["pyarrow"] = None  # import pyarrow raises ImportError: the numpy reader
from precall.cli import main
code = main(sys.argv[2:])

def _peak():
    try:
        with open("/proc/self/status") as fh:  # this process image's high-water mark (not the parent's)
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
    except (OSError, StopIteration):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
sys.stderr.write(f"\\nPEAK {_peak()}\\n")
sys.exit(code)
"""


def _write(directory: str, rows: int, seed: int) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    y = (rng.random(rows) < 0.3).astype(np.int64)
    p = np.round(rng.random(rows) * 0.7 + 0.3 * y, 6)
    q = np.round(rng.random(rows), 6)
    csv_path, pq_path = os.path.join(directory, "big.csv"), os.path.join(directory, "big.parquet")
    try:
        import pyarrow as pa
        import pyarrow.csv as pcsv
        import pyarrow.parquet as pq

        table = pa.table({"y": y, "p": p, "q": q})
        pcsv.write_csv(table, csv_path, write_options=pcsv.WriteOptions(quoting_style="none"))
        pq.write_table(table, pq_path)
    except ImportError:
        np.savetxt(csv_path, np.column_stack([y, p, q]), fmt=["%d", "%.6f", "%.6f"], delimiter=",",
                   header="y,p,q", comments="")
        pq_path = ""
    return csv_path, pq_path


def _run(code: str, args: list[str]) -> tuple[float, int]:
    """Wall time (s) and peak RSS (bytes) of one subprocess."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, err = proc.communicate()
    elapsed = time.perf_counter() - t0
    text = err.decode()
    if proc.returncode != 0 or "PEAK " not in text:
        raise SystemExit(f"failed ({proc.returncode}): {args}\n{text}")
    return elapsed, int(text.rsplit("PEAK ", 1)[1].split()[0])


def _machine() -> str:
    versions = []
    for name in ("numpy", "pyarrow", "pandas", "precall"):
        try:
            module = __import__(name)
            versions.append(f"{name} {module.__version__}")
        except ImportError:
            versions.append(f"{name} -")
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError):
        memory = float("nan")
    return (f"{platform.platform()}, {os.cpu_count()} CPUs, {memory:.1f} GiB, Python "
            f"{platform.python_version()}, {', '.join(versions)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, default=5e6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", help="where to write the files (default: a temporary folder)")
    parser.add_argument("--output", help="also write the markdown table to this file")
    args = parser.parse_args(argv)
    rows = int(args.rows)
    with tempfile.TemporaryDirectory(dir=args.dir) as directory:
        csv_path, pq_path = _write(directory, rows, args.seed)
        evaluate = ["evaluate", "--label", "y", "--score", "p"]
        cases: list[tuple[str, str, str, list[str]]] = [
            ("csv", "pandas.read_csv + precall.evaluate", PANDAS, [csv_path]),
            ("csv", "precall evaluate", CLI, ["pyarrow", evaluate[0], csv_path, *evaluate[1:]]),
            ("csv", "precall evaluate --stream", CLI, ["pyarrow", evaluate[0], csv_path, *evaluate[1:], "--stream"]),
            ("csv", "precall evaluate, no pyarrow (numpy)", CLI, ["no-pyarrow", evaluate[0], csv_path, *evaluate[1:]]),
            ("csv", "precall evaluate --stream, no pyarrow", CLI,
             ["no-pyarrow", evaluate[0], csv_path, *evaluate[1:], "--stream"]),
        ]
        if pq_path:
            cases += [
                ("parquet", "pandas.read_parquet + precall.evaluate", PANDAS, [pq_path]),
                ("parquet", "precall evaluate", CLI, ["pyarrow", evaluate[0], pq_path, *evaluate[1:]]),
                ("parquet", "precall evaluate --stream", CLI,
                 ["pyarrow", evaluate[0], pq_path, *evaluate[1:], "--stream"]),
            ]
        times: dict[int, list[float]] = {i: [] for i in range(len(cases))}
        peaks: dict[int, int] = {i: 0 for i in range(len(cases))}
        for _ in range(args.repeats):
            for i, (_, _, code, case_args) in enumerate(cases):
                elapsed, peak = _run(code, case_args)
                times[i].append(elapsed)
                peaks[i] = max(peaks[i], peak)
        sizes = {"csv": os.path.getsize(csv_path), "parquet": os.path.getsize(pq_path) if pq_path else 0}
    median = {i: statistics.median(t) for i, t in times.items()}
    reference = {fmt: median[i] for i, (fmt, what, _, _) in enumerate(cases) if what.startswith("pandas")}
    lines = [
        f"`precall evaluate` on {rows:,} rows x 3 columns (label, two scores; one --score), "
        f"median of {args.repeats} runs, each a fresh process (times include Python start-up and imports)",
        "",
        "| file | size MB | run | time s | peak RSS MB | / pandas + evaluate |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for i, (fmt, what, _, _) in enumerate(cases):
        lines.append(f"| {fmt} | {sizes[fmt] / 1e6:.0f} | {what} | {median[i]:.2f} | {peaks[i] / 2**20:.0f} | "
                     f"{median[i] / reference[fmt]:.2f}x |")
    lines += ["", f"all times (s): " + "; ".join(
        f"{cases[i][0]} {cases[i][1]}: {', '.join(f'{t:.2f}' for t in ts)}" for i, ts in times.items()),
        "", f"machine: {_machine()}"]
    emit(lines, args.output)


if __name__ == "__main__":
    main()
