"""One file, one answer on every engine: in memory, ``--stream`` and ``--engine dask`` accept the
same files and read the same rows, or stop with the same one-line error naming the file, the line
(or row) and the column, exit 2; with pyarrow's parsers and without them.

The files (``tests/data/engine_files``) are an audit's: each one ``--engine dask`` used to read
otherwise than the readers (a repeated column, a boolean or a string as a score, an empty line
between rows, a missing key or a null read as NaN with a partition's index, ``1_000`` and
full-width digits failing inside pandas, a label ``"1.0"`` or ``true`` beside JSON numbers merged
with ``1``, in the labels or a ``--by`` column; an integer beyond 64 bits in a label, a ``--by``
column or an unused key, which pandas' JSON parser refuses, and an unused key of another type in a
later block, which dask refused as another block type), and the checks that need the whole file (no
data rows, every weight zero), which ``--stream`` and ``--engine dask`` said in their own words.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from precall import readers
from precall.cli import _engines, main

pytest.importorskip("dask.dataframe")

DATA = Path(__file__).parent / "data" / "engine_files"
ENGINES = {"memory": [], "stream": ["--stream", "--chunk-rows", "2"],
           "dask": ["--engine", "dask", "--scheduler", "synchronous"]}
FILES = {  # file: extra options
    "dupcol.csv": [], "blank_lines.csv": [], "underscore.csv": [], "full_width.csv": [],
    "underscore_weighted.csv": ["--weight", "w"], "bool_score.jsonl": [], "strnum.jsonl": [],
    "missing_key.jsonl": [], "lab_mixed_10.jsonl": [], "lab_bool_int.jsonl": ["--pos-label", "1"],
    "null_score.parquet": [], "slices_mixed.jsonl": ["--by", "g"],
    "types_by_partition.jsonl": ["--pos-label", "true", "--by", "g"],
    # integers beyond 64 bits (pandas: "Value is too big!"): a label, slice values, an unused key of
    # several types (the readers read only the columns asked for)
    "big_label.jsonl": ["--pos-label", "100000000000000000000"], "big_by.jsonl": ["--by", "g"],
    "big_unused.jsonl": [],
    # the checks that need every row: the in-memory reader's messages on every engine
    "header_only.csv": [], "empty.jsonl": [], "zero_weights.csv": ["--weight", "w"],
}


def _outcome(path: Path, engine: str, extra: list[str], capsys) -> tuple[int, str]:
    """The exit status and the first line of the error, or the JSON output."""
    code = main(["evaluate", str(path), "--label", "y", "--score", "p", "--json", *extra, *ENGINES[engine]])
    out, err = capsys.readouterr()
    return code, (err.splitlines()[0] if err else "") if code else json.loads(out)


def _hide_pyarrow(monkeypatch) -> None:
    """The readers with pyarrow hidden from them (numpy's and the exact parsers)."""
    monkeypatch.setattr(readers, "_pyarrow", lambda: None)


def _small_blocks(monkeypatch) -> None:
    """dask's text readers cut into blocks of 32 bytes: about a partition a line."""
    import dask.dataframe as dd

    for name in ("read_csv", "read_json"):
        def small(*args, _real=getattr(dd, name), **kw):
            if kw.get("blocksize") is not None:
                kw["blocksize"] = 32
            return _real(*args, **kw)
        monkeypatch.setattr(dd, name, small)


@pytest.mark.parametrize("fast, name", [(fast, name) for name in sorted(FILES) for fast in ("pyarrow", "no-pyarrow")
                                         if not (fast == "no-pyarrow" and name.endswith(".parquet"))])
def test_every_engine_reads_the_file_or_stops_with_the_same_line(tmp_path, capsys, monkeypatch, fast, name):
    """Parquet needs pyarrow: without it, it is refused by name (tests/test_readers_files.py)."""
    if fast == "no-pyarrow":
        _hide_pyarrow(monkeypatch)
    path = tmp_path / name  # the message names the file: one path for every engine
    shutil.copy(DATA / name, path)
    memory, stream, dask = (_outcome(path, engine, FILES[name], capsys) for engine in ENGINES)
    assert stream == memory
    assert dask == memory
    _small_blocks(monkeypatch)  # partitions of one type beside partitions of another (true is not 1)
    assert _outcome(path, "dask", FILES[name], capsys) == memory
    if memory[0]:
        assert memory[0] == 2 and memory[1].startswith(f"precall: error: {path}: ")
        said = dask[1].replace(str(path), "")  # the message, not the file's name (types_by_partition.jsonl)
        assert "partition" not in said and "index" not in said, dask[1]


def test_dask_reading_otherwise_than_the_readers_is_one_line_not_another_answer(tmp_path, capsys, monkeypatch):
    """Should dask's parsers read other labels or values than the readers' pass over the same
    file, the command stops (exit 2) rather than answer for other rows."""
    path = tmp_path / "t.csv"
    path.write_text("y,p,w\n0,0.25,1\n1,0.5,2\n1,0.75,1\n")
    real = _engines._read_through
    argv = ["evaluate", str(path), "--label", "y", "--score", "p", "--weight", "w", *ENGINES["dask"]]
    for change, what in (({"counts": {"0": 2, "1": 1}}, "column 'y': the labels"),
                         ({"scores": 1}, "column 'p': the scores"), ({"weights": 1}, "column 'w': the weights")):
        def read(args, by, change=change):
            got = real(args, by)
            return _engines._FileRead(**{**got.__dict__, **{k: (type(getattr(got, k))(v) if k == "counts" else
                                                                 (getattr(got, k) + v) % 2**64)
                                                              for k, v in change.items()}})
        monkeypatch.setattr(_engines, "_read_through", read)
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"precall: error: {path}: {what}") and "read differently by dask" in err, err


def test_a_folder_of_parquet_files_is_checked_file_by_file_by_the_readers(tmp_path, capsys):
    """``--engine dask`` on a folder: each Parquet file read by the readers first, so a bad row
    is named by its file and row, as the in-memory command names it reading that file."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    folder = tmp_path / "t"
    folder.mkdir()
    pq.write_table(pa.table({"y": [0, 1, 0], "p": [0.1, 0.9, 0.3]}), folder / "a.parquet")
    pq.write_table(pa.table({"y": [1, 0, 1], "p": [0.8, None, 0.7]}), folder / "b.parquet")
    (folder / "_SUCCESS").write_text("")  # set aside by dask and by the check alike
    code, line = _outcome(folder, "dask", [], capsys)
    assert (code, line) == _outcome(folder / "b.parquet", "memory", [], capsys)
    assert line.startswith(f"precall: error: {folder / 'b.parquet'}: row 2, column 'p'"), line
    pq.write_table(pa.table({"y": [1, 0, 1], "p": [0.8, 0.2, 0.7]}), folder / "b.parquet")
    code, got = _outcome(folder, "dask", [], capsys)
    assert code == 0 and got["input"]["n_rows"] == 6 and got["input"]["label_counts"] == {"0": 3, "1": 3}


@pytest.mark.parametrize("name", ["dupcol.csv", "header_only.csv", "zero_weights.csv"])
def test_a_remote_path_keeps_the_header_and_whole_file_messages(tmp_path, capsys, name):
    """A path the readers cannot read through on the client (a URL: the workers read it) still
    gets the readers' header check and the in-memory messages of the checks that need every row."""
    path = tmp_path / name
    shutil.copy(DATA / name, path)
    code, line = _outcome(path, "memory", FILES[name], capsys)
    url = f"file://{path}"
    assert _outcome(url, "dask", FILES[name], capsys) == (code, line.replace(str(path), url))
