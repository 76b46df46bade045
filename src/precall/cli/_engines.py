"""``evaluate --stream``, ``--engine dask`` and ``--engine spark``: binary input without holding the rows in memory."""

from __future__ import annotations

import argparse
import contextlib
import gc
import dataclasses
import functools
import math
import os
import re
import sys
import tempfile
import warnings
from collections import Counter
from typing import Any, Callable, Iterator, Sequence

import numpy as np

import precall
from precall import readers
from precall._slicing import coded_accumulator
from precall.readers import Columns, iter_file, label_counts, label_text, slice_text

from ._common import CliError, cli_spelling, resolve_pos_label


#: ``evaluate --engine``: in memory (the default), streamed through an Accumulator, on Dask
ENGINES = ("memory", "stream", "dask", "spark")

def check_single_binary(args: argparse.Namespace, option: str) -> None:
    if args.class_columns is not None or len(args.score) != 1:
        raise CliError(f"{option} takes one --score column (binary input)")
    if args.ties != "group" or args.ci or args.at_recall or args.at_precision or args.at_threshold or args.at_best:
        raise CliError(f"{option} evaluates with grouped ties and no --ci / --at-*; drop those options")


Evaluations = tuple[precall.Evaluation, tuple[tuple[float, precall.Evaluation], ...]]


def evaluate_stream(args: argparse.Namespace) -> tuple[Evaluations, Counter[str], str]:
    """``--stream``: the file in chunks through an exact :class:`precall.Accumulator`."""
    path = args.file
    acc, counts, positive = _streamed(args, lambda positive: precall.Accumulator(pos_label=positive),
                                      lambda acc, chunk, y: acc.update(y, chunk.scores, sample_weight=chunk.weights))
    prevalences = list(dict.fromkeys(args.prevalence or ()))
    try:  # from the steps, computed once: the full table is never built
        evaluation, *at = acc.evaluations([None, *prevalences], recall_grid=args.recall_grid)
    except ValueError as exc:
        raise CliError(f"{path}: {exc}") from None
    return (evaluation, tuple(zip(prevalences, at))), counts, positive  # type: ignore[return-value]


def _streamed(args: argparse.Namespace, start: Callable[[str], Any], add: Callable[[Any, Columns, np.ndarray], Any],
              by: Sequence[str] = ()) -> tuple[Any, Counter[str], str]:
    """The file in chunks (:func:`precall.readers.iter_file`), each added to one state
    (``start(positive label)``, ``add(state, chunk, labels)``); the label counts; the positive label."""
    path, score = args.file, args.score[0]
    given = _given_positive(args)
    counts: Counter[str] = Counter()
    acc = positive = None
    weighted = False
    for chunk in iter_file(path, label=args.label, score_columns=[(score, "--score")], weight=args.weight,
                           delimiter=args.delimiter, chunk_rows=args.chunk_rows, by=by):
        counts.update(label_counts(chunk.labels))
        weighted = weighted or (chunk.weights is not None and bool(chunk.weights.any()))
        if acc is None:  # a given --pos-label need not occur in the first chunk: checked on the whole file below
            positive = given if given is not None else resolve_pos_label(
                label_counts(chunk.labels), None, args.label, path)
            acc = start(positive)
        try:
            add(acc, chunk, np.array(chunk.labels))
        except (ValueError, TypeError) as exc:
            raise CliError(f"{path}: {exc}") from None
    _whole_file(args, sum(counts.values()), weighted)
    if resolve_pos_label(counts, given, args.label, path) != positive:
        raise CliError(f"{path}: column {args.label!r}: the labels of the whole file do not give the "
                       f"positive label of the first chunk ({positive!r}); name it with --pos-label")
    return acc, counts, str(positive)


def _given_positive(args: argparse.Namespace) -> str | None:
    """``--pos-label`` as the text of the label it names: in a column of numbers by value
    (:func:`precall.readers.number_label`, ``1.0`` for the label ``1``), as the in-memory reader
    takes it, before any chunk or partition is read."""
    if args.pos_label is None:
        return None
    return readers.number_label(args.pos_label, readers.numeric_labels(args.file, args.label))


def _whole_file(args: argparse.Namespace, rows: int, weighted: bool) -> None:
    """The checks of a file that need every row, with the in-memory reader's messages
    (:func:`precall.readers.check_whole_file`): some data row; with ``--weight``, some positive weight."""
    try:
        readers.check_whole_file(args.file, rows, args.weight, weighted)
    except readers.InputError as bad:
        raise CliError(str(bad)) from None


def stream_slices(args: argparse.Namespace, by: list[str]) -> SlicedInput:
    """``--stream --by``: the file in chunks through one exact :class:`precall.SlicedAccumulator`,
    each chunk's slice values numbered in the order the file first shows them (a dictionary per
    column growing chunk by chunk), renamed at the end to the codes of the in-memory route
    (:func:`precall._slicing.coded_accumulator`)."""
    seen: list[dict[str, int]] = [{} for _ in by]

    def add(acc: precall.SlicedAccumulator, chunk: Columns, y: np.ndarray) -> None:
        codes = {}
        for index, column in zip(seen, chunk.by):  # a chunk's codes into the file's numbering; -1: missing
            number = np.array([index.setdefault(text, len(index)) for text in column.texts] + [np.nan])
            codes[column.name] = number[column.codes]
        acc.update(y, chunk.scores, by=codes, sample_weight=chunk.weights)

    acc, counts, positive = _streamed(args, lambda positive: precall.SlicedAccumulator(pos_label=positive), add, by)
    texts = [list(index) for index in seen]
    return SlicedInput(*coded_accumulator(acc, lambda j, v: texts[j][int(v)]), counts, positive)


@dataclasses.dataclass(frozen=True)
class SlicedInput:
    """``--by`` through an engine: the accumulator of every slice (keyed by the in-memory route's
    codes: :func:`precall._slicing.coded`), each column's values in code order, the label counts
    and the positive label (as text)."""

    accumulator: Any
    values: list[list[str]]
    counts: Counter[str]
    positive: str


_DASK_SCHEDULERS = ("synchronous", "threads", "processes")


def _dask_frame(args: argparse.Namespace, by: Sequence[str] = ()) -> tuple[Any, Any, Any, Any, _FileRead | None]:
    """dask, pandas, :mod:`precall.dask`, the file's columns (label, score, weight, ``by``)
    as a dask DataFrame, the format by the readers' one dispatch, and what the readers read
    of a local file (:func:`_read_through`; None for a remote one)."""
    try:
        import dask
        import dask.dataframe as dd
        import pandas

        import precall.dask as pdask
    except ImportError:
        raise CliError("--engine dask needs the 'dask' extra: pip install 'precall[dask]'") from None
    path, score = args.file, args.score[0]
    if "://" not in path and not os.path.exists(path):  # remote paths are for the workers to read
        raise CliError(f"{path}: no such file")
    columns = [args.label, score] + ([args.weight] if args.weight else []) + list(by)
    gzipped = path.lower().endswith(".gz")
    kind = "parquet" if path.endswith("/") or os.path.isdir(path) else readers.file_format(path)  # one dispatch
    if kind not in ("parquet", "jsonl", "delimited"):
        raise CliError(f"{path}: --engine dask reads Parquet, CSV / TSV and JSON Lines files; use --stream "
                       "for other formats")
    read = _read_through(args, by)  # a local file: read once by the readers, which decide what is accepted
    if read is None and kind == "delimited":
        _remote_header(args, by)
    try:
        if kind == "parquet":  # a file or a folder of them
            frame = dd.read_parquet(path, columns=columns, blocksize="64MiB")
        elif kind == "jsonl":
            # precise_float: pandas rounds otherwise; dtype=False: values as JSON gives them (pandas' default
            # casts a column of strings such as "0.1", and a label "1.0" beside numbers, to floats, and text
            # in a column named like a date to dates); convert-string off: dask's default
            # casts a column of mixed values to text (true -> 'True'); each block's columns typed as every
            # other block's (_json_block)
            engine = functools.partial(_json_block, labels=[args.label, *by],
                                       numbers=[score, *([args.weight] if args.weight else [])], text=read is not None)
            with dask.config.set({"dataframe.convert-string": False}):
                frame = dd.read_json(path, lines=True, precise_float=True, dtype=False, engine=engine,
                                     blocksize=None if gzipped else 1 << 26)
        elif kind == "delimited":  # labels and slices as text (an empty field: a missing slice value)
            frame = dd.read_csv(path, sep=args.delimiter or readers.default_delimiter(path),
                                dtype={c: str for c in [args.label, *by]}, keep_default_na=False,
                                blocksize=None if gzipped else "64MiB")
        missing = [c for c in columns if c not in frame.columns]
        if missing:
            raise _dask_failure(args, by, KeyError(f"no column {missing[0]!r}; the columns are {list(frame.columns)}"))
        frame = frame[columns]
    except (ValueError, TypeError, OSError, KeyError) as exc:
        raise _dask_failure(args, by, exc) from None
    return dask, pandas, pdask, frame, read


@dataclasses.dataclass(frozen=True)
class _FileRead:
    """What the readers read of a file: the label counts (as text), and of the score and weight
    columns the fingerprint of :func:`_fingerprint` (the weight's None without ``--weight``)."""

    counts: Counter[str]
    scores: int
    weights: int | None


def _fingerprint(values: np.ndarray) -> int:
    """The sum of the values' float64 bits modulo 2**64 (-0.0 counted as 0.0): the same for the
    same multiset of values in any order and partitioning, and different, but for a collision of
    probability 2**-64, when one value differs."""
    bits = (np.asarray(values, dtype=np.float64) + 0.0).view(np.uint64)
    return int(bits.sum(dtype=np.uint64))


def _read_through(args: argparse.Namespace, by: Sequence[str]) -> _FileRead | None:
    """A local file read once, in chunks, by the readers (:func:`precall.readers.iter_file`, as
    ``--stream`` reads it: one chunk in memory at a time), so that ``--engine dask`` accepts
    exactly the files the in-memory command accepts and stops on the others with the readers'
    one-line message (file, line or row, column).  A local folder of Parquet files: each file so
    (its message names the file and its row).  None for a remote path, or a folder whose files
    are not all Parquet files holding every column (hive partitions): the workers read those,
    and only the checks of each partition apply."""
    files = _local_files(args, by)
    if files is None:
        return None
    counts: Counter[str] = Counter()
    scores, weights = 0, (0 if args.weight else None)
    weighted = False
    message = None
    for path in files:
        chunks = iter_file(path, label=args.label, score_columns=[(args.score[0], "--score")], weight=args.weight,
                           delimiter=args.delimiter, chunk_rows=args.chunk_rows, by=by)
        try:
            for chunk in chunks:
                counts.update(label_counts(chunk.labels))
                scores += _fingerprint(chunk.scores)
                if weights is not None and chunk.weights is not None:
                    weights += _fingerprint(chunk.weights)
                    weighted = weighted or bool(chunk.weights.any())
        except readers.InputError as bad:
            message = str(bad)
        finally:  # the reader and its threads released now (see _located)
            chunks.close()
            del chunks
            gc.collect()
        if message is not None:
            raise CliError(message)
    _whole_file(args, sum(counts.values()), weighted)
    return _FileRead(counts, scores % 2**64, None if weights is None else weights % 2**64)


def _remote_header(args: argparse.Namespace, by: Sequence[str]) -> None:
    """The header line of delimited text the readers cannot read through (a remote path), checked
    by the readers' exact reader (:func:`precall.readers.read_delimited` on that line alone): a
    missing or repeated column is their one-line message, where dask would read a repeated
    column's second copy as ``p.1``."""
    import io

    try:
        import fsspec

        with fsspec.open(args.file, "rt", compression="infer", encoding="utf-8-sig", newline="") as stream:
            header = stream.readline()
    except Exception:  # noqa: BLE001 - what cannot be opened here, dask reports
        return
    try:
        readers.read_delimited(io.StringIO(header), args.file, label=args.label,
                               score_columns=[(args.score[0], "--score")], weight=args.weight,
                               delimiter=args.delimiter or readers.default_delimiter(args.file), by=by)
    except readers.InputError as bad:
        if "line 1 (header)" in str(bad):
            raise CliError(str(bad)) from None


def _local_files(args: argparse.Namespace, by: Sequence[str]) -> list[str] | None:
    """The files :func:`_read_through` reads: a local file; the files of a local folder as dask
    finds them (``pyarrow.dataset``: names starting with ``.`` or ``_`` set aside) when every one
    is a Parquet file by the readers' dispatch holding every column asked for; else None."""
    path = args.file
    if "://" in path:
        return None
    if os.path.isfile(path):
        return [path]
    try:
        import pyarrow.dataset as ds

        files = sorted(ds.dataset(path, format="parquet").files)
        wanted = {args.label, args.score[0], *([args.weight] if args.weight else []), *by}
        if files and all(readers.file_format(f) == "parquet" and os.path.isfile(f) and
                         wanted <= set(readers.column_names(f)) for f in files):
            return files
    except Exception:  # noqa: BLE001 - whatever pyarrow cannot list or open, dask reports
        pass
    return None


def _dask_failure(args: argparse.Namespace, by: Sequence[str], exc: BaseException) -> CliError:
    """What dask could not read, said as the readers say it: a local file is read again by
    :func:`precall.readers.iter_file`, whose checks name the first bad row's line and column
    (its message); else the first line of dask's message."""
    found = _located(args, by)
    if found is not None:  # raised here, not in the handler: the reader and its threads are released first
        return CliError(found)
    message = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    _, wrapped, original = str(message).partition("\nOriginal Message: ")  # dask's wrapping of its backend's error
    return CliError(f"{args.file}: {_first_line(original if wrapped else message)}")


def _located(args: argparse.Namespace, by: Sequence[str]) -> str | None:
    """The readers' message for the first bad row of a local file (:func:`precall.readers.iter_file`:
    its line and column), or None when they find none (or the file is remote)."""
    path = args.file
    found = None
    if "://" not in path and os.path.isfile(path):
        chunks = iter_file(path, label=args.label, score_columns=[(args.score[0], "--score")], weight=args.weight,
                           delimiter=args.delimiter, by=by, progress=False)
        try:
            for _ in chunks:
                pass
        except readers.InputError as bad:
            found = str(bad)
        finally:  # the reader and its threads released now: one left to the exit aborted the process (1 in 15)
            chunks.close()
            del chunks
            gc.collect()
    return found


def _dask_labels(args: argparse.Namespace, pandas: Any, frame: Any,
                 read: _FileRead | None) -> tuple[Any, Any, Any, Counter[str], str]:
    """The rows whose label is the positive one, the scores and the weights (None without
    ``--weight``) as numbers (dask Series), the label counts as text and the positive label
    (the readers' rules for a missing label and its text); in the same pass, whether dask read
    the score and weight columns as numbers (:func:`_floats`), some positive weight, and, for a
    file the readers read first (``read``), that dask read the same labels, scores and weights
    (:func:`_same_as_read`)."""
    import dask

    path = args.file
    by = [c for c in frame.columns if c not in (args.label, args.score[0], args.weight)]
    numbers = [args.score[0]] + ([args.weight] if args.weight else [])
    labels = frame[args.label]
    try:  # the first pass over the rows: where dask's parsers find a bad row
        # with the labels, each partition's numbers (_numbers): whether dask read them as numbers, their
        # fingerprint, whether one is positive. (An integer beyond 2**53, which pandas reads beside floats as
        # float64, rounded, where the readers refuse it: refused by the readers' pass over a local file.)
        meta = pandas.DataFrame({"numbers": pandas.Series(dtype=bool), "print": pandas.Series(dtype=np.uint64),
                                 "positive": pandas.Series(dtype=bool)})
        raw, *parts = dask.compute(labels.value_counts(dropna=False),
                                   *[frame[c].map_partitions(_numbers, read is not None, meta=meta) for c in numbers])
    except (ValueError, TypeError, OSError, KeyError) as exc:
        raise _dask_failure(args, by, exc) from None
    if not raw.sum():  # no data rows: the in-memory message (a remote file; a local one was checked already)
        _whole_file(args, 0, True)
    for column, summary in zip(numbers, parts):
        if not summary["numbers"].all():  # text (1_000, a JSON string or boolean): the readers decide
            raise CliError(_located(args, by) or f"{path}: column {column!r}: dask reads values that are not "
                           "numbers (text or booleans); --stream on a local copy names the first one's line")
    counts: Counter[str] = Counter()
    texts = {}
    for value, n in raw.items():  # the readers' rule for a missing label
        if pandas.isna(value) or readers.label_problem(label_text(value)) is not None:
            raise _dask_failure(args, by, ValueError(f"column {args.label!r}: {n} rows have no label ({value!r}); "
                                                     "fill or drop them"))
        texts[value] = label_text(value)
        counts[texts[value]] += int(n)
    if args.weight:
        _whole_file(args, sum(counts.values()), bool(parts[1]["positive"].any()))
    if read is not None:
        _same_as_read(args, read, counts, [sum(int(f) for f in summary["print"]) % 2**64 for summary in parts])
    positive = resolve_pos_label(counts, _given_positive(args), args.label, path)
    score, weight = (None if c is None else frame[c] if _is_number(frame[c].dtype) else
                     frame[c].map_partitions(_as_floats, read is not None, meta=(c, np.float64))
                     for c in (args.score[0], args.weight))
    return labels.isin([v for v, text in texts.items() if text == positive]), score, weight, counts, positive


def _json_block(stream: Any, *, labels: list[str], numbers: list[str], text: bool, **kw: Any) -> Any:
    """A block of JSON Lines read by pandas (``pandas.read_json``, ``kw``), its columns typed the
    same in every block, as dask requires: only the columns read (label, ``--by``, score, weight;
    other keys may hold anything in any line, as the readers allow, so a key of another type in a
    later block is not a block of another type), the label and ``--by`` columns as objects, a column
    of several JSON types or of booleans as the readers' texts (:func:`precall.readers.label_text`;
    missing values, None and NaN, kept), as Python compares ``True == 1`` where the readers do not;
    the score and weight columns as float64, text by Python's ``float`` only with ``text`` (a file
    the readers accepted), anything else (strings, booleans) refused naming the column.  A block
    with an integer pandas' parser cannot hold (beyond 64 bits: "Value is too big!") is read by
    Python's :mod:`json` instead (:func:`_json_records`), as the readers read it: exact integers."""
    import io

    import pandas

    data = stream.read()
    wanted = list(dict.fromkeys([*labels, *numbers]))
    try:
        frame = pandas.read_json(io.StringIO(data), **kw)
        keys = list(frame.columns)
    except ValueError as exc:
        if not str(exc).startswith(("Value is too big", "Value is too small")):
            raise
        read = _json_records(data, wanted, numbers)
        if read is None:
            raise
        frame, keys = read
    absent = [c for c in wanted if c not in frame.columns]
    if absent and len(frame):  # in no line of the block: a partition without the column
        raise ValueError(f"no column {absent[0]!r}; the columns are {keys}")
    frame = frame[[c for c in wanted if c in frame.columns]]
    for name in labels:
        if name in frame.columns:
            column = frame[name]
            if column.dtype == bool or column.dtype == object:
                frame[name] = column.map(lambda v: v if v is None or (isinstance(v, float) and v != v)
                                         else label_text(v)).astype(object)
            else:
                frame[name] = column.astype(object)
    for name in numbers:
        if name in frame.columns and not (_is_number(frame[name].dtype) and frame[name].dtype == np.float64):
            values = _floats(frame[name], text)
            if values is None:
                raise ValueError(f"column {name!r}: values that are not numbers (text or booleans); --stream on a "
                                 "local copy names the first one's line")
            frame[name] = values
    return frame


def _json_records(data: str, wanted: list[str], numbers: list[str]) -> tuple[Any, list[str]] | None:
    """A block of JSON Lines read line by line by Python's :mod:`json` (integers of any size exact,
    as the readers read them): the ``wanted`` columns that some line holds, typed as pandas types
    them (a column of numbers, not booleans, as float64 when it is a score or weight column, an
    integer beyond a float64 as infinity, which the validators refuse; every other column as
    objects, JSON null or a missing key as None), and every key of the block in order.  None when
    a line is not a JSON object: pandas' error stands."""
    import json

    import pandas

    rows = []
    for line in data.split("\n"):
        if not line.strip(" \t\r"):
            continue
        try:
            row = json.loads(line)
        except ValueError:
            return None
        if not isinstance(row, dict):
            return None
        rows.append(row)
    frame = pandas.DataFrame(index=pandas.RangeIndex(len(rows)))
    for name in wanted:
        if not any(name in row for row in rows):
            continue
        values = [row.get(name) for row in rows]
        if name in numbers and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            frame[name] = np.array([_float(v) for v in values], dtype=np.float64)
        else:
            frame[name] = pandas.Series(values, index=frame.index, dtype=object)
    return frame, list(dict.fromkeys(key for row in rows for key in row))


def _float(value: int | float) -> float:
    try:
        return float(value)
    except OverflowError:  # an integer beyond a float64
        return math.inf if value > 0 else -math.inf


def _floats(column: Any, text: bool) -> np.ndarray | None:
    """A partition's score or weight column as float64, or None unless dask read it as numbers
    (not booleans); with ``text``, a column of text (``1_000``, which dask's CSV parser does not
    read) by Python's ``float``, as the readers' exact reader reads a field: only for a file the
    readers accepted (:func:`_read_through`), whose values the fingerprints then compare."""
    import pandas

    dtype = column.dtype
    if _is_number(dtype):
        return column.to_numpy(dtype=np.float64, na_value=np.nan)
    if not text or pandas.api.types.is_bool_dtype(dtype):
        return None
    try:
        return np.array([float(v) for v in column], dtype=np.float64)
    except (TypeError, ValueError):
        return None


def _is_number(dtype: Any) -> bool:
    import pandas

    return bool(pandas.api.types.is_numeric_dtype(dtype) and not pandas.api.types.is_bool_dtype(dtype))


def _as_floats(column: Any, text: bool) -> Any:
    """A partition's score or weight column as numbers: unchanged when it holds numbers, else
    :func:`_floats` as a pandas Series on the partition's index (unchanged when None)."""
    import pandas

    if _is_number(column.dtype):
        return column
    values = _floats(column, text)
    return column if values is None else pandas.Series(values, index=column.index, name=column.name)


def _numbers(column: Any, text: bool) -> Any:
    """A partition's score or weight column summarised in one row: whether it holds numbers
    (:func:`_floats`); if so its :func:`_fingerprint` and whether a value is positive."""
    import pandas

    values = _floats(column, text)
    numbers, fingerprint, positive = False, 0, False
    if values is not None:
        with np.errstate(invalid="ignore"):
            positive = bool((values > 0).any())
        numbers, fingerprint = True, _fingerprint(values)
    return pandas.DataFrame({"numbers": [numbers], "print": np.array([fingerprint], dtype=np.uint64),
                             "positive": [positive]})


def _same_as_read(args: argparse.Namespace, read: _FileRead, counts: Counter[str], prints: list[int]) -> None:
    """Refuse, in one line, what dask's parsers read differently from the readers' pass over the
    same file (:func:`_read_through`): other labels or counts, other scores or weights.  The
    readers accepted the file, so dask must give the rows they gave or nothing."""
    what = None
    if counts != read.counts:
        shown = ", ".join(f"{k!r} ({n})" for k, n in sorted(read.counts.items())[:5])
        what = f"column {args.label!r}: the labels (precall's reader: {shown})"
    elif prints[0] != read.scores:
        what = f"column {args.score[0]!r}: the scores"
    elif args.weight and prints[1] != read.weights:
        what = f"column {args.weight!r}: the weights"
    if what is not None:
        raise CliError(f"{args.file}: {what} are read differently by dask's parser than by precall's reader; "
                       "evaluate with --stream (the same exact numbers in one process) or in memory")


def evaluate_dask(args: argparse.Namespace) -> tuple[Evaluations, Counter[str], str]:
    """``--engine dask``: the file read by dask.dataframe, evaluated by score ranges on a
    Dask cluster (a local one by default, ``--scheduler`` an address or a local scheduler)."""
    dask, pandas, pdask, frame, read = _dask_frame(args)
    with _dask_scheduler(dask, args.scheduler):
        is_positive, score, weight, counts, positive = _dask_labels(args, pandas, frame, read)
        prevalences = list(dict.fromkeys(args.prevalence or ()))
        try:  # one pass: every prevalence reduces the same range steps
            evaluation, *at = pdask.evaluations(is_positive, score, sample_weight=weight, pos_label=True,
                                                recall_grid=args.recall_grid, prevalences=[None, *prevalences])
        except (ValueError, TypeError) as exc:
            raise CliError(f"{args.file}: {exc}") from None
    return (evaluation, tuple(zip(prevalences, at))), counts, positive


def dask_slices(args: argparse.Namespace, by: list[str]) -> SlicedInput:
    """``--engine dask --by``: one :class:`precall.SlicedAccumulator` per partition, merged
    (:func:`precall.dask.accumulate` with ``by=``), its slices renamed from the column values to
    the in-memory route's codes of their texts (:func:`precall.readers.slice_text`)."""
    dask, pandas, pdask, frame, read = _dask_frame(args, by)
    with _dask_scheduler(dask, args.scheduler):
        is_positive, score, weight, counts, positive = _dask_labels(args, pandas, frame, read)
        # slice values as plain objects: missing (NaN, None, pandas' NA) as None
        values = {c: frame[c].map_partitions(_plain_values, meta=(c, object)) for c in by}
        try:
            acc = pdask.accumulate(is_positive, score, sample_weight=weight, pos_label=True,
                                   by=values)
        except (ValueError, TypeError) as exc:
            raise _dask_failure(args, by, ValueError(cli_spelling(_first_line(exc)))) from None
    return SlicedInput(*coded_accumulator(acc, lambda j, v: slice_text(v.item() if isinstance(v, np.generic) else v)),
                       counts, positive)


def _plain_values(column: Any) -> Any:
    """A partition's slice column as objects, missing values (NaN, None, pandas' NA) as None;
    dates, times and durations as the readers' text (:func:`precall.readers.slice_text`)."""
    values = column.astype(object).where(column.notna(), None)
    if getattr(column.dtype, "kind", "O") in "mM":
        values = values.map(lambda v: None if v is None else slice_text(v.to_pydatetime() if hasattr(
            v, "to_pydatetime") else v.to_pytimedelta() if hasattr(v, "to_pytimedelta") else v))
    return values


@contextlib.contextmanager
def _dask_scheduler(dask: Any, scheduler: str | None) -> Iterator[None]:
    """A local Dask cluster for the evaluation (default), a named local scheduler, or an address."""
    if scheduler in _DASK_SCHEDULERS:
        with dask.config.set(scheduler=scheduler):
            yield
        return
    try:
        import distributed
    except ImportError:
        raise CliError("--engine dask without a local --scheduler needs distributed: pip install "
                       "'precall[dask]'") from None
    if scheduler is None:
        with distributed.LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=40) as cluster, \
                distributed.Client(cluster):
            yield
        return
    try:
        client = distributed.Client(scheduler, timeout=30)
    except (OSError, ValueError, TimeoutError) as exc:
        raise CliError(f"--scheduler {scheduler}: cannot connect: {exc}") from None
    with client:
        yield


_TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}")


def _spark_input(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """``--engine spark``'s modules and the checked path (a Parquet file or folder, or a table name)."""
    try:
        from pyspark.errors import PySparkException
        from pyspark.sql import SparkSession

        import precall.spark as pspark
    except ImportError:
        raise CliError("--engine spark needs the 'spark' extra: pip install 'precall[spark]'") from None
    path = args.file
    is_file = "://" in path or os.path.exists(path)
    folder = path.endswith("/") or os.path.isdir(path)
    if is_file and not folder and readers.file_format(path) != "parquet":  # the readers' one dispatch
        raise CliError(f"{path}: --engine spark reads Parquet files and tables; use --engine dask or --stream for "
                       "other formats")
    if not is_file and not _TABLE_NAME.fullmatch(path):
        raise CliError(f"{path}: no such file, and not a table name (db.table)")
    return (PySparkException, SparkSession, pspark), is_file, path


def _spark_frame(spark: Any, pspark: Any, errors: Any, args: argparse.Namespace, is_file: bool,
                 by: Sequence[str] = ()) -> tuple[Any, Any, Counter[str], str, Any]:
    """The DataFrame, its scan (every row checked), the label counts as text, the positive label
    as text (the readers' rule) and as the column's value.  The labels follow the readers' rules:
    a label whose text is missing (``NA``, ``None``, ``nan``, empty: :data:`precall.readers.MISSING_LABELS`)
    is refused, and values of one text (``" 1"`` and ``"1"``) are one label: the frame's label
    column then holds one value for the positive label's texts.  A refusal of a local file is the
    readers' message (its row and column), as in memory."""
    path = args.file
    try:
        frame = spark.read.parquet(path) if is_file else spark.table(path)
        scanned = pspark.scan(frame, args.label, args.score[0], weight=args.weight)
        large = _spark_large_integer(frame, args)
    except (ValueError, TypeError, errors) as exc:
        found = _located(args, by) if is_file else None  # the readers' words: row and column
        raise CliError(found or f"{path}: {_first_line(exc)}") from None
    if large is not None:  # the readers' rule (they read scores as float64), as every engine applies it
        found = _located(args, by) if is_file else None
        name, what, value = large
        raise CliError(found or f"{path}: column {name!r}: {readers.beyond_message(what, value)}")
    counts: Counter[str] = Counter()
    texts = {}
    for value, n in scanned.label_counts.items():
        texts[value] = label_text(value)
        counts[texts[value]] += int(n)
    for value, text in texts.items():  # the readers' rule for a missing label
        problem = readers.label_problem(text)
        if problem is not None:
            found = _located(args, by) if is_file else None
            raise CliError(found or f"{path}: column {args.label!r}: {problem}")
    positive = resolve_pos_label(counts, _given_positive(args), args.label, path)
    values = [v for v, text in texts.items() if text == positive]
    if len(values) > 1:  # one label to the readers: the positive rows by one value of the column
        from pyspark.sql import functions as F

        column = F.col("`" + args.label.replace("`", "``") + "`")
        frame = frame.withColumn(args.label, F.when(column.isin(values), F.lit(values[0])).otherwise(column))
        merged = Counter({v: n for v, n in scanned.label_counts.items() if v not in values[1:]})
        merged[values[0]] = sum(scanned.label_counts[v] for v in values)
        scanned = dataclasses.replace(scanned, label_counts=dict(merged))
    return frame, scanned, counts, positive, values[0]


def _spark_large_integer(frame: Any, args: argparse.Namespace) -> tuple[str, str, int] | None:
    """The first score or weight of a 64-bit integer column beyond 2**53 in magnitude, as ``(column,
    "the score" or "the weight", value)``, or None (one Spark job a column of that type)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    for name, what in ((args.score[0], "the score"), (args.weight, "the weight")):
        if name is not None and isinstance(frame.schema[name].dataType, T.LongType):
            row = frame.select(name).where((F.col(name) > 2**53) | (F.col(name) < -(2**53))).first()
            if row is not None:
                return name, what, int(row[0])
    return None


def _first_line(exc: BaseException | str) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def evaluate_spark(args: argparse.Namespace) -> tuple[Evaluations, Counter[str], str]:
    """``--engine spark``: a Parquet file (or folder) or a table name read by Spark and
    evaluated by :mod:`precall.spark` (score ranges on the executors for large tables)."""
    (errors, session, pspark), is_file, path = _spark_input(args)
    with _spark_session(session, args.master) as spark:
        frame, scanned, counts, positive, value = _spark_frame(spark, pspark, errors, args, is_file)
        prevalences = list(dict.fromkeys(args.prevalence or ()))
        try:  # the same passes for every prevalence
            evaluation, *at = pspark.evaluations(frame, args.label, args.score[0], weight=args.weight,
                                                 pos_label=value, recall_grid=args.recall_grid,
                                                 prevalences=[None, *prevalences], scanned=scanned)
        except (ValueError, TypeError, errors) as exc:
            raise CliError(f"{path}: {_first_line(exc)}") from None
    return (evaluation, tuple(zip(prevalences, at))), counts, positive


def spark_slices(args: argparse.Namespace, by: list[str]) -> SlicedInput:
    """``--engine spark --by``: one :class:`precall.SlicedAccumulator` per partition, merged on the
    executors (``precall.spark``'s ``by=``), its slices renamed from the column values to the
    in-memory route's codes of their texts (:func:`precall.readers.slice_text`: a missing text
    such as ``NA``, ``None`` or ``NaN`` is the slice ``(missing)``, values of one text are one
    slice), as ``--stream`` and ``--engine dask`` do: the same slices and numbers as in memory."""
    from precall.scale import spark as spark_engine

    (errors, session, pspark), is_file, path = _spark_input(args)
    with _spark_session(session, args.master) as spark:
        frame, scanned, counts, positive, value = _spark_frame(spark, pspark, errors, args, is_file, by)
        try:
            acc = spark_engine._accumulate_by(frame, args.label, args.score[0], args.weight, by, value,
                                              scanned=scanned)
        except (ValueError, TypeError, errors) as exc:
            raise CliError(f"{path}: {cli_spelling(_first_line(exc))}") from None
    return SlicedInput(*coded_accumulator(acc, lambda j, v: slice_text(v.item() if isinstance(v, np.generic) else v)),
                       counts, positive)


#: ``--engine spark --ci`` brings at most this many rows to the driver (about 17 bytes a row)
SPARK_CI_ROWS = 10_000_000


def read_spark(args: argparse.Namespace, names: list[str], by: Sequence[str] = ()) -> readers.Columns:
    """``--engine spark --ci``: the label, score, weight and ``--by`` columns collected by Spark
    (Arrow, in Spark's row order: a Parquet file's own) and checked and converted as the file
    reader does (:func:`precall.readers.read_arrow`), so the estimates and the intervals are the
    in-memory ones for the same rows (same method, resamples and seed).  Tables of more than
    :data:`SPARK_CI_ROWS` rows are refused: intervals resample in one process."""
    (errors, session, _), is_file, path = _spark_input(args)
    wanted = list(dict.fromkeys([args.label, *names, *([args.weight] if args.weight else []), *by]))
    with _spark_session(session, args.master) as spark:
        try:
            frame = spark.read.parquet(path) if is_file else spark.table(path)
            present = [c for c in wanted if c in frame.columns]
            n_rows = frame.count()
            if n_rows > SPARK_CI_ROWS:
                raise CliError(f"{path}: --ci with --engine spark brings the rows to the driver, at most "
                               f"{SPARK_CI_ROWS:,}; this table has {n_rows:,}. Drop --ci for the exact estimates by "
                               "score ranges, or run --ci on a sample of the table")
            table = frame.select(*(frame[f"`{c}`"] for c in present)).toArrow()
        except (ValueError, TypeError, errors) as exc:
            raise CliError(f"{path}: {_first_line(exc)}") from None
    return readers.read_arrow(table, path, label=args.label, score_columns=[(c, "--score") for c in names],
                              weight=args.weight, by=by)


@contextlib.contextmanager
def _spark_session(builder_class: Any, master: str | None) -> Iterator[Any]:
    """:func:`_session`, pyspark's own future and deprecation warnings (about its environment, such as
    pandas' version: not about the data) not printed, as the in-memory command prints none."""
    with warnings.catch_warnings():
        for category in (FutureWarning, DeprecationWarning):
            warnings.filterwarnings("ignore", category=category, module="pyspark")
        with _session(builder_class, master) as spark:
            yield spark


_SPARK_CONF = {"spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false"}
"""A new session's settings: no web UI, no ``[Stage N:==>]`` progress bars."""


_JVM_NOISE = re.compile(
    r"\s*at |WARNING: |Using |Setting default log level|To adjust logging level|\S+ \S+ (WARN|INFO) ")
"""Lines of a JVM's log that say nothing about why it stopped: stack frames, warnings, log4j's notes."""


def _jvm_said(log: Any) -> str:
    """What the JVM said about a start that failed: the first line of its log (``log``, a file)
    that is not a stack frame, a warning or a note (``Exception in thread "main" ...``, or the
    launcher's ``java: No such file or directory``)."""
    try:
        log.seek(0)
        lines = [line.strip() for line in log.read().decode("utf-8", "replace").splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    said = next((line for line in lines if not _JVM_NOISE.match(line)), "")
    said = said.removeprefix('Exception in thread "main" ')
    return f" (Java: {said})" if said else ""


def _start(builder_class: Any, master: str, log: Any) -> Any:
    """A new session whose JVM writes its stdout and stderr (log4j's lines, the JVM's own warnings
    such as "Using incubator modules", Spark's progress) to ``log``, not to the terminal: the
    command's stderr holds precall's lines only, and its stdout the output alone.  A JVM already
    running in this process (an earlier session) keeps its streams."""
    from pyspark import SparkConf, SparkContext

    try:
        from pyspark.java_gateway import launch_gateway
    except ImportError:  # pragma: no cover - a pyspark without a local JVM (Spark Connect only)
        launch_gateway = None
    builder = builder_class.builder.master(master).appName("precall")
    for key, value in _SPARK_CONF.items():
        builder = builder.config(key, value)
    if launch_gateway is not None and SparkContext._gateway is None:
        conf = SparkConf().setMaster(master).setAppName("precall").setAll(list(_SPARK_CONF.items()))
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
        SparkContext(conf=conf, gateway=gateway)
    return builder.getOrCreate()


@contextlib.contextmanager
def _session(builder_class: Any, master: str | None) -> Iterator[Any]:
    """The active Spark session, or a new one (``--master``, default ``local[*]``) stopped at the end,
    its JVM's output kept off the terminal (:func:`_start`)."""
    active = builder_class.getActiveSession()
    if active is not None:
        yield active
        return
    master = master or "local[*]"
    if master.startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        os.environ["PYSPARK_PYTHON"] = sys.executable  # local workers run this interpreter (with precall)
    with tempfile.TemporaryFile() as log:
        try:
            spark = _start(builder_class, master, log)
        except Exception as exc:  # noqa: BLE001 - Java missing, a bad master URL: one line, exit 2
            said = str(exc).splitlines()[0] if str(exc) else repr(exc)
            raise CliError(f"--master {master}: cannot start Spark: {said}{_jvm_said(log)}") from None
        spark.sparkContext.setLogLevel("ERROR")
        try:
            yield spark
        finally:
            spark.stop()
