"""Reading labelled scores from files, every row checked (used by the command line).

Formats, by file name:

========================================  ====================================================
``.csv``, ``.tsv``, ``.tab``, ``.txt``    delimited text with a header line (stdlib ``csv``)
``.jsonl``, ``.ndjson``                   JSON Lines: one object per line, keys are columns
(any of the above + ``.gz``)              gzip'd
``.parquet``, ``.pq``                     Parquet, read a row group at a time (``pyarrow``,
                                          the ``parquet`` extra)
``.npz``                                  NumPy archive: one 1-D array per column
``.npy``                                  NumPy structured array: one field per column
========================================  ====================================================

Every row is used.  A malformed input raises :class:`InputError` with one line
naming the file, the line (text formats; the header is line 1) or the data row
(binary formats; the first row is row 1), and the column: a missing column, a
non-numeric or non-finite score, an empty label, a negative weight, an empty
file.  Nothing is skipped silently.  Large files show a progress line on a
terminal (stderr), nothing otherwise.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import sys
import time
from dataclasses import dataclass
from typing import IO, Any, Callable, Iterator, Sequence

import numpy as np

__all__ = ["Columns", "InputError", "iter_file", "label_text", "read_delimited", "read_file"]

ScoreColumns = Sequence[tuple[str, str]]  # (column, the option that named it)


class InputError(ValueError):
    """A malformed input: one line naming the file, the line or row, and the column."""


@dataclass(frozen=True)
class Columns:
    """The columns of a table needed for one evaluation, one entry per data row.

    ``scores`` has shape ``(n_rows,)`` for one score column (and no
    ``classes``), else ``(n_rows, n_columns)`` in the order asked for.
    """

    labels: list[str]
    scores: np.ndarray
    weights: np.ndarray | None


# ---------------------------------------------------------------------------
# progress on a terminal
class _Progress:
    """``\\rNAME: 42% (120 of 260 MB)`` on stderr, at most five times a second."""

    def __init__(self, name: str, total: int, enabled: bool | None = None) -> None:
        self.name, self.total = name, total
        if enabled is None:
            enabled = total > (16 << 20) and sys.stderr.isatty()
        self.enabled = enabled
        self.last = 0.0
        self.shown = False

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.2:
            return
        self.last = now
        pct = 100.0 * done / self.total if self.total else 100.0
        sys.stderr.write(f"\r{self.name}: {pct:3.0f}% ({done / 1e6:.0f} of {self.total / 1e6:.0f} MB)")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * (len(self.name) + 30) + "\r")
            sys.stderr.flush()


class _Counting(io.RawIOBase):
    """A binary file that reports the bytes read so far to a :class:`_Progress`."""

    def __init__(self, raw: IO[bytes], progress: _Progress) -> None:
        self.raw, self.progress, self.done = raw, progress, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        n = self.raw.readinto(buffer)  # type: ignore[attr-defined]
        self.done += n or 0
        self.progress.update(self.done)
        return n

    def close(self) -> None:
        self.raw.close()
        super().close()


# ---------------------------------------------------------------------------
# shared checks
def _stem(path: str) -> str:
    name = path.lower()
    return name[:-3] if name.endswith(".gz") else name


def _delimiter_for(path: str) -> str:
    return "\t" if _stem(path).endswith((".tsv", ".tab")) else ","


def _finish(
    name: str,
    labels: list[str],
    scores: np.ndarray,
    weights: np.ndarray | None,
    *,
    label: str,
    score_columns: ScoreColumns,
    weight: str | None,
    classes: list[str] | None,
    where: Callable[[int], str],
    whole: bool = True,
) -> Columns:
    """Check the assembled columns (``where(i)`` names data row i) and shape the scores.

    ``whole=False`` for one chunk of a file: the checks that need every row (some
    row at all, some positive weight) are left to :func:`_concat`."""
    if whole and not labels:
        raise InputError(f"{name}: no data rows")
    empty = [i for i, text in enumerate(labels) if not text]
    if empty:
        raise InputError(f"{name}: {where(empty[0])}, column {label!r}: empty label")
    if classes is not None:
        known = set(classes)
        bad = [i for i, text in enumerate(labels) if text not in known]
        if bad:
            shown = ", ".join(repr(c) for c in classes)
            raise InputError(
                f"{name}: {where(bad[0])}, column {label!r}: label {labels[bad[0]]!r} is not a "
                f"class; the classes are the --class-columns names {shown}"
            )
    bad_score = ~np.isfinite(scores)
    if bad_score.any():
        i, j = np.argwhere(bad_score)[0]
        raise InputError(
            f"{name}: {where(int(i))}, column {score_columns[j][0]!r}: the score must be finite; "
            f"got {str(float(scores[i, j]))!r}"
        )
    if weights is not None:
        bad_weight = ~np.isfinite(weights) | (weights < 0)
        if bad_weight.any():
            i = int(np.flatnonzero(bad_weight)[0])
            raise InputError(
                f"{name}: {where(i)}, column {weight!r}: the weight must be finite and "
                f"non-negative; got {str(float(weights[i]))!r}"
            )
        if whole and not weights.any():
            raise InputError(f"{name}: column {weight!r}: every weight is zero; at least one must be positive")
    if classes is None and scores.shape[1] == 1:
        scores = scores[:, 0]
    return Columns(labels, scores, weights)


def label_text(value: Any) -> str:
    """A label as the CLI compares it: booleans as true/false, integral floats as integers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


# ---------------------------------------------------------------------------
# delimited text
def _open_binary(path: str) -> IO[bytes]:
    try:
        if os.path.isdir(path):
            raise InputError(f"{path}: is a directory, not a file")
        return open(path, "rb")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot open: {exc.strerror or exc}") from None


def _open_text(path: str, progress: _Progress) -> IO[str]:
    """``path`` (plain or gzip'd) as UTF-8 text, counting the bytes read for ``progress``."""
    raw: IO[bytes] = io.BufferedReader(_Counting(_open_binary(path), progress), 1 << 20)
    if path.lower().endswith(".gz"):
        raw = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[assignment]
    return io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")


def _csv_rows(reader: Any, name: str) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line number where the row starts, fields)``."""
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(f"{name}: line {start}: malformed CSV: {exc}") from None
        except UnicodeDecodeError:
            raise InputError(f"{name}: line {start}: not valid UTF-8 text") from None
        except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
            raise InputError(f"{name}: cannot read: {exc}") from None
        yield start, row


def _column_index(header: list[str], column: str, option: str, name: str, where: str) -> int:
    matches = [i for i, h in enumerate(header) if h == column]
    if not matches:
        shown = ", ".join(repr(h) for h in header)
        raise InputError(f"{name}: {where}: no column {column!r} (given by {option}); the columns are {shown}")
    if len(matches) > 1:
        raise InputError(
            f"{name}: {where}: column {column!r} (given by {option}) appears {len(matches)} times, "
            f"as fields {', '.join(str(i + 1) for i in matches)}"
        )
    return matches[0]


def _number(text: str, what: str, column: str, where: str, name: str) -> float:
    try:
        return float(text)
    except ValueError:
        shown = "an empty field" if not text.strip() else repr(text)
        raise InputError(f"{name}: {where}, column {column!r}: {what} must be a number; got {shown}") from None


def _concat(name: str, chunks: Iterator[Columns], weight: str | None, empty: str) -> Columns:
    """One Columns from a file's chunks, with the checks that need every row."""
    parts = list(chunks)
    labels = [lab for part in parts for lab in part.labels]
    if not labels:
        raise InputError(f"{name}: {empty}")
    scores = np.concatenate([part.scores for part in parts])
    weights = None if weight is None else np.concatenate([part.weights for part in parts])  # type: ignore[misc]
    if weights is not None and not weights.any():
        raise InputError(f"{name}: column {weight!r}: every weight is zero; at least one must be positive")
    return Columns(labels, scores, weights)


def _delimited_chunks(
    stream: IO[str], name: str, *, label: str, score_columns: ScoreColumns, weight: str | None,
    delimiter: str, classes: list[str] | None, chunk_rows: int,
) -> Iterator[Columns]:
    reader = csv.reader(stream, delimiter=delimiter, strict=True)
    rows = _csv_rows(reader, name)
    first = next(rows, None)
    if first is None:
        raise InputError(f"{name}: empty file (no header line, no data rows)")
    header = [h.strip() for h in first[1]]
    if not any(header):
        raise InputError(f"{name}: line 1: the first line must be a header naming the columns")
    head = "line 1 (header)"
    i_label = _column_index(header, label, "--label", name, head)
    i_scores = [(col, _column_index(header, col, option, name, head)) for col, option in score_columns]
    i_weight = None if weight is None else _column_index(header, weight, "--weight", name, head)
    width = len(header)

    labels: list[str] = []
    scores: list[list[float]] = []
    weights: list[float] = []
    lines: list[int] = []

    def flush() -> Columns:
        s = np.array(scores, dtype=np.float64).reshape(len(labels), len(i_scores))
        w = np.array(weights, dtype=np.float64) if weight is not None else None
        at = list(lines)
        return _finish(name, list(labels), s, w, label=label, score_columns=score_columns, weight=weight,
                       classes=classes, where=lambda i: f"line {at[i]}", whole=False)

    blank_line: int | None = None
    for line, row in rows:
        if not row:
            if blank_line is None:
                blank_line = line
            continue
        if blank_line is not None:
            raise InputError(
                f"{name}: line {blank_line}: empty line between data rows; remove it (precall does not skip rows)"
            )
        if len(row) != width:
            wanted = [(label, i_label), *i_scores, (weight, i_weight)]
            missing = [c for c, i in wanted if i is not None and i >= len(row)]
            detail = f", so column {missing[0]!r} is missing" if missing else ""
            raise InputError(f"{name}: line {line}: {len(row)} fields, the header has {width}{detail}")
        where = f"line {line}"
        labels.append(row[i_label].strip())
        scores.append([_number(row[i], "the score", col, where, name) for col, i in i_scores])
        if i_weight is not None:
            weights.append(_number(row[i_weight], "the weight", weight, where, name))  # type: ignore[arg-type]
        lines.append(line)
        if len(labels) >= chunk_rows:
            yield flush()
            labels.clear(), scores.clear(), weights.clear(), lines.clear()
    if labels:
        yield flush()


def read_delimited(
    stream: IO[str],
    name: str,
    *,
    label: str,
    score_columns: ScoreColumns,
    weight: str | None = None,
    delimiter: str = ",",
    classes: list[str] | None = None,
) -> Columns:
    """Read a delimited table with a header line from a text stream.

    ``name`` is the file name used in messages; line numbers are the file's
    (the header is line 1).  Every data row must have as many fields as the
    header; blank lines are errors except at the very end.
    """
    chunks = _delimited_chunks(stream, name, label=label, score_columns=score_columns, weight=weight,
                               delimiter=delimiter, classes=classes, chunk_rows=1 << 62)
    return _concat(name, chunks, weight, "no data rows after the header (line 1)")


# ---------------------------------------------------------------------------
# JSON Lines
def _jsonl_chunks(
    stream: IO[str], name: str, *, label: str, score_columns: ScoreColumns, weight: str | None,
    classes: list[str] | None, chunk_rows: int,
) -> Iterator[Columns]:
    labels: list[str] = []
    scores: list[list[float]] = []
    weights: list[float] = []
    lines: list[int] = []
    wanted = [(label, "--label"), *score_columns] + ([(weight, "--weight")] if weight else [])

    def flush() -> Columns:
        s = np.array(scores, dtype=np.float64).reshape(len(labels), len(score_columns))
        w = np.array(weights, dtype=np.float64) if weight is not None else None
        at = list(lines)
        return _finish(name, list(labels), s, w, label=label, score_columns=score_columns, weight=weight,
                       classes=classes, where=lambda i: f"line {at[i]}", whole=False)

    try:
        for line, text in enumerate(stream, 1):
            if not text.strip():
                continue  # blank lines carry no record in JSON Lines
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise InputError(f"{name}: line {line}: not valid JSON: {exc.msg}") from None
            if not isinstance(record, dict):
                raise InputError(f"{name}: line {line}: each line must be a JSON object; got {type(record).__name__}")
            for column, option in wanted:
                if column not in record:
                    shown = ", ".join(repr(k) for k in record)
                    raise InputError(
                        f"{name}: line {line}: no key {column!r} (given by {option}); the keys are {shown}"
                    )
            value = record[label]
            if value is None or isinstance(value, (dict, list)):
                raise InputError(f"{name}: line {line}, column {label!r}: the label must be a string or a number; got {value!r}")
            labels.append(label_text(value))
            scores.append([_json_number(record[c], "the score", c, line, name) for c, _ in score_columns])
            if weight is not None:
                weights.append(_json_number(record[weight], "the weight", weight, line, name))
            lines.append(line)
            if len(labels) >= chunk_rows:
                yield flush()
                labels.clear(), scores.clear(), weights.clear(), lines.clear()
    except UnicodeDecodeError:
        raise InputError(f"{name}: not valid UTF-8 text") from None
    except (OSError, EOFError) as exc:
        raise InputError(f"{name}: cannot read: {exc}") from None
    if labels:
        yield flush()


def _json_number(value: Any, what: str, column: str, line: int, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{name}: line {line}, column {column!r}: {what} must be a number; got {value!r}")
    return float(value)


# ---------------------------------------------------------------------------
# binary formats: Parquet, .npz, .npy
def _row(i: int) -> str:
    return f"row {i + 1}"


def _numeric(values: Any, column: str, name: str, what: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"{name}: column {column!r} must be 1-D; got shape {arr.shape}")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise InputError(f"{name}: column {column!r}: {what} must be numeric; got dtype {arr.dtype}")
    return arr.astype(np.float64)


def _from_arrays(
    name: str, get: Callable[[str, str], Any], *, label: str, score_columns: ScoreColumns,
    weight: str | None, classes: list[str] | None, first_row: int = 0, whole: bool = True,
) -> Columns:
    raw_labels = np.asarray(get(label, "--label"))
    if raw_labels.ndim != 1:
        raise InputError(f"{name}: column {label!r} must be 1-D; got shape {raw_labels.shape}")
    labels = [label_text(v) for v in raw_labels.tolist()]
    columns = [_numeric(get(c, option), c, name, "the score") for c, option in score_columns]
    w = None if weight is None else _numeric(get(weight, "--weight"), weight, name, "the weight")
    for c, arr in [*zip([c for c, _ in score_columns], columns), *([(weight, w)] if w is not None else [])]:
        if arr.shape[0] != len(labels):
            raise InputError(f"{name}: column {c!r} has {arr.shape[0]} rows, column {label!r} has {len(labels)}")
    scores = np.column_stack(columns) if columns else np.empty((len(labels), 0))
    return _finish(name, labels, scores, w, label=label, score_columns=score_columns, weight=weight,
                   classes=classes, where=lambda i: _row(first_row + i), whole=whole)


def _read_numpy(path: str, **kw: Any) -> Columns:
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable NumPy file: {exc}") from None
    if isinstance(data, np.lib.npyio.NpzFile):
        names = list(data.files)

        def get(column: str, option: str) -> Any:
            if column not in names:
                raise InputError(f"{path}: no array {column!r} (given by {option}); the arrays are {names}")
            return data[column]
    else:
        names = list(data.dtype.names or ())
        if not names:
            raise InputError(f"{path}: a .npy file must hold a structured array with named fields; got dtype {data.dtype}")

        def get(column: str, option: str) -> Any:
            if column not in names:
                raise InputError(f"{path}: no field {column!r} (given by {option}); the fields are {names}")
            return data[column]
    return _from_arrays(path, get, **kw)


def _parquet_chunks(path: str, progress: _Progress, **kw: Any) -> Iterator[Columns]:
    """One Columns per row group (checked, row numbers counted over the whole file)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"{path}: reading Parquet needs pyarrow, the 'parquet' extra: pip install 'precall[parquet]'"
        ) from None
    try:
        pf = pq.ParquetFile(path)
    except Exception as exc:  # pyarrow raises its own error types for corrupt files
        raise InputError(f"{path}: not a readable Parquet file: {exc}") from None
    names = pf.schema_arrow.names
    wanted = [(kw["label"], "--label"), *kw["score_columns"]] + ([(kw["weight"], "--weight")] if kw["weight"] else [])
    for column, option in wanted:
        if column not in names:
            raise InputError(f"{path}: no column {column!r} (given by {option}); the columns are {names}")
    columns = list(dict.fromkeys(c for c, _ in wanted))
    done, read = 0, 0
    for g in range(pf.num_row_groups):
        batch = pf.read_row_group(g, columns=columns)
        arrays = {}
        for c in columns:
            col = batch.column(c)
            if col.null_count:
                first = int(np.flatnonzero(np.asarray(col.is_null()))[0])
                raise InputError(f"{path}: {_row(done + first)}, column {c!r}: a null (missing) value")
            arrays[c] = col.to_numpy(zero_copy_only=False)
        yield _from_arrays(path, lambda c, option: arrays[c], first_row=done, whole=False, **kw)
        done += batch.num_rows
        read += int(pf.metadata.row_group(g).total_byte_size)
        progress.update(read)


# ---------------------------------------------------------------------------
def iter_file(
    path: str,
    *,
    label: str,
    score_columns: ScoreColumns,
    weight: str | None = None,
    classes: list[str] | None = None,
    delimiter: str | None = None,
    progress: bool | None = None,
    chunk_rows: int = 1 << 18,
) -> Iterator[Columns]:
    """:func:`read_file` in chunks of about ``chunk_rows`` rows (Parquet: one row group
    each; ``.npz`` / ``.npy``: one chunk), each chunk checked as it is read, so a
    file larger than memory can be streamed.  The checks that need the whole file
    (some data row; some positive weight) are the caller's."""
    stem = _stem(path)
    size = os.path.getsize(path) if os.path.isfile(path) else 0
    meter = _Progress(path, size, progress)
    kw: dict[str, Any] = {"label": label, "score_columns": score_columns, "weight": weight, "classes": classes}
    try:
        if stem.endswith((".parquet", ".pq")):
            _open_binary(path).close()
            yield from _parquet_chunks(path, meter, **kw)
        elif stem.endswith((".npz", ".npy")):
            _open_binary(path).close()
            yield _read_numpy(path, **kw)
        else:
            with _open_text(path, meter) as stream:
                if stem.endswith((".jsonl", ".ndjson")):
                    yield from _jsonl_chunks(stream, path, chunk_rows=chunk_rows, **kw)
                else:
                    yield from _delimited_chunks(stream, path, delimiter=delimiter or _delimiter_for(path),
                                                 chunk_rows=chunk_rows, **kw)
    finally:
        meter.close()


def read_file(
    path: str,
    *,
    label: str,
    score_columns: ScoreColumns,
    weight: str | None = None,
    classes: list[str] | None = None,
    delimiter: str | None = None,
    progress: bool | None = None,
) -> Columns:
    """Read the label, score and weight columns of ``path``, the format from its name.

    ``score_columns`` lists ``(column, option that named it)``; ``classes``
    (multi-class: one score column per class) requires every label to be one
    of them.  ``progress=None`` shows progress for large files on a terminal.
    """
    chunks = iter_file(path, label=label, score_columns=score_columns, weight=weight, classes=classes,
                       delimiter=delimiter, progress=progress, chunk_rows=1 << 62)
    empty = "no data rows" if _stem(path).endswith((".jsonl", ".ndjson", ".parquet", ".pq", ".npz", ".npy")) \
        else "no data rows after the header (line 1)"
    return _concat(path, chunks, weight, empty)

