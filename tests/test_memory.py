"""Memory of ``precall evaluate FILE --label y --score p`` (issue 27, item 4): a bound, not a timing.

The command runs in a fresh subprocess on a Parquet and a CSV file of 1,000,000 rows (a binary
label, as 0/1 or as "yes"/"no", 20% positives; a float64 score).  Its peak is measured as
numpy's and Python's allocations (``tracemalloc``, which numpy reports to) plus the peak of
pyarrow's memory pool (which ``tracemalloc`` does not see): an upper bound of the two at once.
The unit is the bytes of the columns as arrays: the scores as stored (8 bytes a row) and
the labels as one-byte codes.  Measured when the bound was set: 5.5x-5.9x (numpy and Python
3.95x; pyarrow's pool 1.5x-1.9x, one row group or a few blocks of text, whatever the
rows); before issue 27, 10.1x-11.1x.  The bound is 7.5x.  What does not grow with the rows is loaded
before the measured run: the lazily imported modules and, when the kernel choice takes them, numba's
compiled passes (their import and disk cache, about 30 MB of Python objects, once a process).
Further cases: half the rows positive, with and without the compiled kernel; JSON Lines; the readers
as without pyarrow (numpy's CSV parser, the exact JSON Lines reader).  ``benchmarks/bench_memory.py``
measures the resident peak at 1e7 and 1e8 rows, reading and evaluating apart.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")
pcsv = pytest.importorskip("pyarrow.csv")
pq = pytest.importorskip("pyarrow.parquet")

ROWS = 1_000_000
BOUND = 7.5  # peak / column bytes
BOUND32 = 5.0  # a float32 score column: peak / its own column bytes (4 + 1 a row)

CHILD = """
import io, json, os, sys, contextlib, tracemalloc
import pyarrow as pa
from precall.cli import main
from precall._core import backend
if os.environ.get("PRECALL_TEST_NO_PYARROW"):  # the readers as without pyarrow: numpy's parser for text
    import precall.readers
    precall.readers._pyarrow = lambda: None
small, big, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
with contextlib.redirect_stdout(io.StringIO()):
    # the modules imported lazily and, where the kernel choice takes them for the big file, the
    # compiled passes loaded from numba's cache: the small file run through them too
    previous = backend.set_kernel("numba" if backend.compiled(10**9) is not None else backend.get_kernel())
    main(["evaluate", small, "--label", "y", "--score", "p", *extra])
    backend.set_kernel(previous)
    tracemalloc.start()
    code = main(["evaluate", big, "--label", "y", "--score", "p", *extra])
traced = tracemalloc.get_traced_memory()[1]
print(json.dumps({"code": code, "traced": traced, "arrow": pa.default_memory_pool().max_memory()}))
"""


def _write(path: str, rows: int, text: bool, seed: int, dtype: str = "float64", positives: float = 0.2) -> None:
    rng = np.random.default_rng(seed)
    positive = rng.random(rows) < positives
    y = pa.array(np.where(positive, "yes", "no")) if text else pa.array(positive.astype(np.int64))
    table = pa.table({"y": y, "p": pa.array((rng.random(rows) * 0.7 + 0.3 * positive).astype(dtype))})
    if path.endswith(".csv"):
        pcsv.write_csv(table, path, write_options=pcsv.WriteOptions(quoting_style="none"))
    elif path.endswith(".jsonl"):
        with open(path, "w") as fh:
            for y_, p_ in zip(table["y"].to_pylist(), table["p"].to_pylist()):
                fh.write(json.dumps({"y": y_, "p": p_}) + "\n")
    else:
        pq.write_table(table, path)


def _peak(tmp_path, fmt: str, text: bool, dtype: str = "float64", positives: float = 0.2, rows: int = ROWS,
          kernel: str | None = None, pyarrow: bool = True) -> tuple[int, int]:
    """The measured peak (bytes) of ``precall evaluate`` on a file of ``rows`` rows, and its columns' bytes
    (``kernel``: ``PRECALL_KERNEL`` of the command; ``pyarrow=False``: read as without pyarrow)."""
    small, big = str(tmp_path / f"small.{fmt}"), str(tmp_path / f"big.{fmt}")
    _write(small, 100, text, 1, dtype, positives)
    _write(big, rows, text, 2, dtype, positives)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    if kernel is not None:
        env["PRECALL_KERNEL"] = kernel
    if not pyarrow:
        env["PRECALL_TEST_NO_PYARROW"] = "1"
    proc = subprocess.run([sys.executable, "-c", CHILD, small, big, *(["--pos-label", "yes"] if text else [])],
                          capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["code"] == 0
    return got["traced"] + got["arrow"], rows * (np.dtype(dtype).itemsize + 1)  # scores, uint8 label codes


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("text", [False, True], ids=["int labels", "text labels"])
def test_evaluate_peak_is_a_few_times_the_columns(tmp_path, fmt, text):
    peak, columns = _peak(tmp_path, fmt, text)
    assert peak <= BOUND * columns, f"peak {peak / 1e6:.1f} MB = {peak / columns:.2f}x the columns' {columns / 1e6:.1f} MB"


def test_a_float32_score_column_is_held_in_its_own_four_bytes(tmp_path):
    """A float32 Parquet column stays float32 (4 bytes a row, not widened to float64, not copied for
    the nearest scores around the best F1's threshold): its peak against its own columns' bytes is
    bounded as the float64 file's is.  Measured when set: 4.63x; before, 5.59x."""
    peak, columns = _peak(tmp_path, "parquet", True, "float32")
    assert peak <= BOUND32 * columns, f"peak {peak / 1e6:.1f} MB = {peak / columns:.2f}x the columns' {columns / 1e6:.1f} MB"


@pytest.mark.parametrize("kernel", [None, "numpy"], ids=["auto", "numpy"])
@pytest.mark.parametrize("dtype, bound", [("float64", 3.5), ("float32", 5.5)])
def test_half_positives_do_not_hold_the_steps_as_arrays(tmp_path, dtype, bound, kernel):
    """Half the rows positive: every positive a step.  Held as arrays, the steps take 48 bytes each;
    from ``steps.WINDOWED_MIN`` positives, when that is more than half the scores' bytes, ``evaluate``
    reads them from the sorted keys a chunk at a time instead (``steps.key_steps``), or without the
    compiled kernel from the sorted scores, sorted in their own memory (``steps.split_steps``).
    Measured when set (1.2e6 rows, text labels): 2.73x (float64) and 4.52x (float32, whose columns
    are 5 bytes a row) with numba; with the steps as arrays 4.84x and 7.31x.  The numpy route: 2.73x
    and 4.36x; before, 7.85x and 12.54x."""
    rows = 1_200_000  # 600,000 positives: above steps.WINDOWED_MIN
    peak, columns = _peak(tmp_path, "parquet", True, dtype, positives=0.5, rows=rows, kernel=kernel)
    assert peak <= bound * columns, f"peak {peak / 1e6:.1f} MB = {peak / columns:.2f}x the columns' {columns / 1e6:.1f} MB"


def test_text_read_without_pyarrow_is_held_a_block_at_a_time(tmp_path):
    """numpy's parser (the install without pyarrow) reads 1 MB of text at a time: a block's bytes, its
    str, the parser's copy and a Python string per label.  With 64 MB blocks ``precall evaluate`` on a
    1e7-row CSV peaked at 8.0x its columns (RSS; 1 MB blocks: 1.5x).  Measured when set (1e6 rows,
    text labels; traced memory): 2.81x; with 64 MB blocks 25.5x."""
    peak, columns = _peak(tmp_path, "csv", True, pyarrow=False)
    assert peak <= 4.5 * columns, f"peak {peak / 1e6:.1f} MB = {peak / columns:.2f}x the columns' {columns / 1e6:.1f} MB"


def test_json_lines_are_read_a_block_at_a_time(tmp_path):
    """pyarrow reads JSON Lines 1 MB at a time, the whole file too: a table of the whole file held its label
    column as strings (``precall evaluate`` on 1e7 rows peaked at 6.1-6.8x its columns, RSS; now 1.7-1.9x).
    Measured when set (1e6 rows, text labels; traced memory): 4.22x; with the whole table 17.2x."""
    peak, columns = _peak(tmp_path, "jsonl", True)
    assert peak <= 5.5 * columns, f"peak {peak / 1e6:.1f} MB = {peak / columns:.2f}x the columns' {columns / 1e6:.1f} MB"


def test_the_exact_readers_hold_a_chunk_of_rows_as_python_objects(tmp_path):
    """Without pyarrow JSON Lines are read by the exact reader (the json module), whose rows are Python
    objects until a chunk is converted: a whole file is read in chunks of 65,536 rows (it was one chunk:
    2.8 GB for 1e7 rows, 30x its columns; now 1.3x, RSS).  Measured when set (1e6 rows, text labels;
    traced memory): 3.13x; as one chunk 28.6x."""
    peak, columns = _peak(tmp_path, "jsonl", True, pyarrow=False)
    assert peak <= 4.0 * columns, f"peak {peak / 1e6:.1f} MB = {peak / columns:.2f}x the columns' {columns / 1e6:.1f} MB"
