"""Peak memory of ``precall evaluate FILE --label y --score p`` against the bytes of its columns.

Writes, in chunks (so that writing needs little memory whatever ``--rows``), a Parquet file
and a CSV file of ``--rows`` rows: a binary label ``y`` (20% positives, or ``--positives``; as
integers 0/1, or as the texts "yes"/"no" with ``--labels text``) and a float64 score ``p``
(every digit: the CSV is about 25 bytes a row; ``--scores float32``: a float32 column in the
Parquet file, none in the CSV, which is text).  Each case runs in a fresh subprocess, which
reports its own high-water mark of resident memory (``VmHWM`` of ``/proc/self/status``).

The columns' bytes, the unit of the ratio: the score column as an array of its stored dtype
(8 bytes a row for float64, 4 for float32) plus the labels as the smallest integer codes (1 byte a row for
two labels): 9 bytes a row (the last column: per 16 bytes a row, int64 labels and float64
scores, the arithmetic of issue 27's "160 MB" at 1e7 rows).  The command's peak is taken in two
phases, each with its own high-water mark: reading the file (up to the call of ``precall.evaluate``)
and evaluating (the mark reset there, ``/proc/self/clear_refs``).  ``baseline`` is each phase's peak
of the same command on a file of 1,000 rows of the same format and labels, with the same kernel (the
compiled one forced where the large run takes it): the interpreter, the modules the command imports
and, in the evaluating phase, the compiled kernel's machine code (numba is imported there, not while
reading), none of which grows with the rows.  Each phase's ratio is ``(peak - baseline) / column
bytes``; the command's is the larger of the two.  (Before the phases were split, one baseline taken
with numba loaded was subtracted from the whole run's peak, which for CSV is the reading phase's, when
numba is not loaded yet: the compiled route's CSV ratios came out too low, ``docs/benchmarks.md``.)
Below the table: the peak of a process that only imports ``precall.cli`` and pyarrow's reader
modules, with and without the compiled kernel.  Run from the repository root::

    python benchmarks/bench_memory.py                       # 1e7 rows, int and text labels
    python benchmarks/bench_memory.py --rows 1e8 --labels int --dir /big/tmp
    python benchmarks/bench_memory.py --scores float64 float32 --positives 0.01 0.2 0.5
    python benchmarks/bench_memory.py --positives 0.5 --steps auto arrays  # the steps as arrays, to compare
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import emit  # noqa: E402

from precall._core.backend import MIN_COMPILED  # noqa: E402

PEAK = """
def _peak():
    with open("/proc/self/status") as fh:  # this process image's high-water mark
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
"""
# two phases, each with its own high-water mark: reading (up to the call of precall.evaluate, numba not yet
# imported) and evaluating (the mark reset there through /proc/self/clear_refs, numba loaded where it runs)
CLI = PEAK + """
import sys
import precall
from precall.cli import main
_evaluate, _read = precall.evaluate, []
def _phased(*args, **kwargs):
    _read.append(_peak())
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return _evaluate(*args, **kwargs)
precall.evaluate = _phased
code = main(sys.argv[1:])
sys.stderr.write(f"\\nPEAK {_read[0] if _read else 0} {_peak()}\\n")
sys.exit(code)
"""
# ``--steps arrays``: the steps held as arrays whatever the positives (the route before issue 27's keys route)
ARRAYS = "from precall._core import steps as _steps\n_steps.windowed = lambda *a: False\n"
BASELINE = PEAK + "import sys, precall.cli, pyarrow, pyarrow.compute, pyarrow.csv, pyarrow.parquet\n"
# the compiled kernel's import and the load of its cached machine code (numba, the `fast` extra: about 125 MB
# of RSS that does not grow with the rows), taken where the command takes it (1e6 rows and more, `auto`)
COMPILED = ("import numpy as np\nfrom precall._core import backend\nfast = backend.compiled(backend.MIN_COMPILED)\n"
            "if fast is not None:\n    fast.radix_sort(np.arange(8), np.empty(8, dtype=np.int64))\n")
BASELINE_COMPILED = BASELINE + COMPILED
REPORT = "sys.stderr.write(f'\\nPEAK 0 {_peak()}\\n')\n"
CHUNK = 1 << 20


def write_files(directory: str, rows: int, labels: str, seed: int = 0, formats: tuple[str, ...] = ("parquet", "csv"),
                scores: str = "float64", positives: float = 0.2) -> dict[str, str]:
    """The data files (by format) of ``rows`` rows, written chunk by chunk (``scores``: the Parquet
    score column's dtype; CSV is text, read as float64)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    y_type = pa.string() if labels == "text" else pa.int64()
    schema = pa.schema([("y", y_type), ("p", pa.from_numpy_dtype(np.dtype(scores)))])
    paths = {f: os.path.join(directory, f"memory_{labels}_{scores}_{positives}_{rows}.{f}") for f in formats}
    writers = []
    if "parquet" in paths:
        writers.append(pq.ParquetWriter(paths["parquet"], schema))
    if "csv" in paths:
        writers.append(pcsv.CSVWriter(paths["csv"], schema, write_options=pcsv.WriteOptions(quoting_style="none")))
    for start in range(0, rows, CHUNK):
        k = min(CHUNK, rows - start)
        positive = rng.random(k) < positives
        p = (rng.random(k) * 0.7 + 0.3 * positive).astype(scores)
        y = np.where(positive, "yes", "no") if labels == "text" else positive.astype(np.int64)
        batch = pa.table({"y": pa.array(y, type=y_type), "p": pa.array(p)}, schema=schema)
        for w in writers:
            w.write_table(batch)
    for w in writers:
        w.close()
    return paths


def peak_rss(code: str, args: list[str], kernel: str | None = None) -> tuple[int, int]:
    """The peak resident memory (bytes) of one subprocess running ``code`` with ``args`` (and
    ``PRECALL_KERNEL=kernel``): while reading (0 for a script without that phase) and evaluating."""
    env = dict(os.environ, **({"PRECALL_KERNEL": kernel} if kernel else {}))
    proc = subprocess.run([sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          check=False, env=env)
    text = proc.stderr.decode()
    if proc.returncode != 0 or "PEAK " not in text:
        raise SystemExit(f"failed ({proc.returncode}): {args}\n{text}")
    read, evaluate = text.rsplit("PEAK ", 1)[1].split()[:2]
    return int(read), int(evaluate)


def machine() -> str:
    versions = []
    for name in ("numpy", "pyarrow", "precall"):
        try:
            versions.append(f"{name} {__import__(name).__version__}")
        except ImportError:
            versions.append(f"{name} -")
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{platform.platform()}, {os.cpu_count()} CPUs, {memory:.1f} GiB, Python "
            f"{platform.python_version()}, {', '.join(versions)}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=float, nargs="+", default=[1e7])
    parser.add_argument("--labels", choices=("int", "text"), nargs="+", default=["int", "text"])
    parser.add_argument("--formats", choices=("parquet", "csv"), nargs="+", default=["parquet", "csv"])
    parser.add_argument("--scores", choices=("float64", "float32"), nargs="+", default=["float64"],
                        help="the Parquet score column's dtype (CSV: float64 only)")
    parser.add_argument("--positives", type=float, nargs="+", default=[0.2], help="fractions of positive rows")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each case (the largest peak is kept)")
    parser.add_argument("--kernel", choices=("auto", "numpy"), default="auto",
                        help="'numpy': PRECALL_KERNEL=numpy for every run, baseline included (an install without numba)")
    parser.add_argument("--steps", choices=("auto", "arrays"), nargs="+", default=["auto"],
                        help="'arrays': the steps held as arrays at every size (steps.windowed off), to compare")
    parser.add_argument("--dir", help="where to write the files (default: a temporary folder); they are deleted")
    parser.add_argument("--output", help="also write the markdown table to this file")
    args = parser.parse_args(argv)
    imports = {big: max(peak_rss((BASELINE_COMPILED if big else BASELINE) + REPORT, [])[1] for _ in range(3))
               for big in (False, True)}
    lines = [
        "`precall evaluate FILE --label y --score p`, peak RSS of a fresh process; column bytes = scores "
        "(float64 8 B/row, float32 4) + labels as uint8 codes (1 B/row); baseline = the same command on 1,000 rows; "
        "ratio = (peak - baseline) / column bytes",
        "",
        "| rows | format | labels | scores | positives | steps | file MB | column MB | read peak MB | evaluate peak MB "
        "| baseline read MB | baseline evaluate MB | read ratio | evaluate ratio | ratio | ratio to 16 B/row |",
        "|---:|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    cases = [(int(r), labels, dtype, positives) for r in args.rows for labels in args.labels for dtype in args.scores
             for positives in args.positives]
    for rows, labels, dtype, positives in cases:
        kernel = "numba" if rows >= MIN_COMPILED and imports[True] > imports[False] else None
        if args.kernel == "numpy":
            kernel = "numpy"
        formats = tuple(f for f in args.formats if f == "parquet" or dtype == "float64")  # CSV: text, float64
        with tempfile.TemporaryDirectory(dir=args.dir) as directory:
            small = write_files(directory, 1000, labels, formats=formats, scores=dtype, positives=positives)
            paths = write_files(directory, rows, labels, formats=formats, scores=dtype, positives=positives)
            for fmt in formats:
                command = ["--label", "y", "--score", "p"] + (["--pos-label", "yes"] if labels == "text" else [])
                baseline = np.max([peak_rss(CLI, ["evaluate", small[fmt], *command], kernel)
                                   for _ in range(max(args.repeats, 3))], axis=0)
                path = paths[fmt]
                for steps in args.steps:
                    code = (ARRAYS if steps == "arrays" else "") + CLI
                    forced = "numpy" if args.kernel == "numpy" else None
                    peak = np.max([peak_rss(code, ["evaluate", path, *command], forced) for _ in range(args.repeats)],
                                  axis=0)
                    column = (np.dtype(dtype if fmt == "parquet" else "float64").itemsize + 1) * rows
                    grown = peak - baseline  # each phase against the same phase of the 1,000-row run
                    top = int(grown.max())
                    lines.append(f"| {rows:.0e} | {fmt} | {labels} | {dtype if fmt == 'parquet' else 'text'} | "
                                 f"{positives:.0%} | {steps} | {os.path.getsize(path) / 1e6:,.0f} | "
                                 f"{column / 1e6:,.0f} | {peak[0] / 1e6:,.0f} | {peak[1] / 1e6:,.0f} | "
                                 f"{baseline[0] / 1e6:,.0f} | {baseline[1] / 1e6:,.0f} | {grown[0] / column:.2f} | "
                                 f"{grown[1] / column:.2f} | {top / column:.2f} | {top / (16 * rows):.2f} |")
                    print(lines[-1], flush=True)
    lines += ["", f"a process that imports precall.cli and pyarrow's reader modules: {imports[False] / 1e6:.0f} MB; "
              f"with the compiled kernel loaded: {imports[True] / 1e6:.0f} MB (the 1,000-row baseline also holds "
              f"the modules the command imports and the machine code of every compiled function it runs)",
              "", f"machine: {machine()}"]
    emit(lines, args.output)


if __name__ == "__main__":
    main()
