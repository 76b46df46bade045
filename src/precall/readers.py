"""Reading labelled scores from files, every row checked (used by the command line).

Formats, by file name:

========================================  ====================================================
``.csv``, ``.tsv``, ``.tab``, ``.txt``    delimited text with a header line (pyarrow's CSV
                                          reader, else numpy's ``loadtxt``; see below)
``.jsonl``, ``.ndjson``                   JSON Lines: one object per line, keys are columns
(any of the above + ``.gz``)              gzip'd
``.parquet``, ``.pq``                     Parquet, in batches (streamed: of ``chunk_rows``)
                                          by ``pyarrow``, the ``parquet`` extra
``.npz``                                  NumPy archive: one 1-D array per column
``.npy``                                  NumPy structured array: one field per column
========================================  ====================================================

Every row is used.  A malformed input raises :class:`InputError` with one line
naming the file, the line (text formats; the header is line 1) or the data row
(binary formats; the first row is row 1), and the column: a missing column, a
non-numeric or non-finite score, a missing label, a negative weight, an empty
file.  Nothing is skipped silently.  Large files show a progress line on a
terminal (stderr), nothing otherwise.  :func:`column_names` reads the column
names of any of these files the same way (the CLI's ``--class-prefix``).

The contract, the same with or without pyarrow (each fast parser's output is
checked, and anything it cannot decide goes to the exact reader):

* **Labels**: a label is missing, and the file refused, when it is empty, null, a
  NaN (in any format and spelling), or a text pandas' ``read_csv`` reads as
  missing (``NA``, ``NULL``, ``None``, ``N/A``, ... :data:`MISSING_LABELS`)
  unless that text is one of the ``classes`` asked for.  A label that is not
  valid Unicode (a JSON ``\\ud800`` escape) is refused.  A slice value (``--by``)
  is missing by the same rule (:func:`_missing_text`), in every format: it is
  then the slice ``(missing)``, never an error.
* **Label kinds**: the labels of a JSON Lines column are all numbers (compared by
  value: ``1`` and ``1.0`` are one label, written ``1``), all strings or all
  booleans; a column mixing kinds (the number ``1`` and the string ``"1.0"``) is
  refused naming the line and column, as the library refuses mixed kinds (Parquet
  and NumPy columns have one type).  Delimited text has no types: its labels are
  text, compared as written.  :func:`positive_label`: the command line's
  ``--pos-label`` names a label of a column of numbers by value (``1.0``, ``1e0``
  name the label ``1``).
* **Text**: UTF-8 (a BOM at the start is allowed), in every column, used or not.
* **Delimited text**: RFC 4180 quoting (``""`` inside quotes), line breaks inside
  quotes, ``\\n`` / ``\\r\\n`` line ends, fields of any length (bounded by the
  file, not by the ``csv`` module's 131,072 characters), trailing empty lines;
  an empty line between rows, a quoted field not closed before the end of the
  file, or text after a closing quote is an error.
* **JSON Lines**: one JSON object per line; blank lines skipped; no comments, no
  trailing commas; two objects on one line or one object over several lines is
  an error; a key of a column read (label, score, weight, ``--by``) repeated in
  one object is an error naming the line and the key (other keys are not read and
  may repeat); numbers in strings are not
  numbers; ``NaN`` / ``Infinity`` are read (then refused as a label or score);
  unused keys may hold anything, nested at most :data:`MAX_JSON_DEPTH` (512)
  levels.  The bytes are checked by a vectorised scan before pyarrow sees them:
  its parser recurses on the C stack and a deeply nested value in any key
  crashed the interpreter.
* **Binary formats** (Parquet, ``.npz``, ``.npy``) are read in place: a gzip'd
  one is refused with a message to decompress it.  The shape a ``.npy`` header
  (of a file, or of each ``.npz`` member) declares is checked against the bytes
  that follow it (a member's declared size, itself checked against the archive)
  before anything is allocated.
* **Files only**: a device (``/dev/zero``), a pipe or a socket is refused (a file
  is read by its size, and more than once); a header line is at most
  :data:`MAX_HEADER_LINE` (16 Mi) characters, so a file without line breaks stops
  there, and every line of a ``.gz`` file (whose size bounds nothing) at most
  :data:`MAX_STREAM_LINE` (64 Mi).
* **Numbers**: scores and weights are held as float64 (float32 columns as float32),
  so an integer beyond 2**53 in magnitude is refused, in every format, rather than
  rounded to tie with its neighbours: an integer column of Parquet or ``.npz``, a
  JSON integer, a field of delimited text that ``int`` reads (no decimal point, no
  exponent), even one a float64 holds exactly (2**60).  Float text
  (``9007199254740993.0``, ``1e16``) is a float: read rounded, as written.  A
  number of delimited text (score, weight) is what the C parsers read: ASCII
  digits, a sign, a decimal point, an exponent, or a spelling of NaN / infinity,
  with spaces or tabs around it; Python's ``float`` reads more (``1_000``,
  full-width ``０.１``, Arabic-Indic digits, other white space), and those are
  refused naming the line and column.  A number that is not finite is quoted
  as written (``1e400``, ``NaN``, a 400-digit integer), not as ``inf``.

Delimited text is parsed by a vectorised C parser: pyarrow's multithreaded CSV
reader when pyarrow is installed, else ``numpy.loadtxt`` (its C tokenizer) on
blocks of lines.  Either one only has to *detect* that something is wrong: the
rows it parses are checked with the same rules (and, as long as no quote
character has been seen, with exact line numbers), and whenever it rejects
the file, or the file has a quote (numpy only) or an empty line before more data,
the file is read again from the start by the stdlib ``csv`` module, which gives
the message with the exact line and column (or, if it accepts what the fast
parser did not, e.g. a line break inside quotes, the rows).  So errors are those
of the exact reader and well-formed files are read at the speed of the C parser.
"""

from __future__ import annotations

import codecs
import csv
import dataclasses
import gzip
import io
import itertools
import json
import math
import os
import re
import stat
import sys
import time
import zlib
import zipfile
from collections import Counter
from dataclasses import dataclass
from typing import IO, Any, Callable, Iterator, Sequence

import numpy as np

from ._core.jsonshape import MAX_JSON_DEPTH, JsonShape as _JsonShape
from ._core.validate import SMALLEST_WEIGHT

__all__ = ["Columns", "InputError", "Labels", "MISSING_LABELS", "SliceColumn", "column_names", "default_delimiter",
           "file_format", "iter_file", "label_counts", "label_problem", "label_text", "read_arrow", "read_delimited",
           "read_file", "slice_text"]

ScoreColumns = Sequence[tuple[str, str]]  # (column, the option that named it)


class InputError(ValueError):
    """A malformed input: one line naming the file, the line or row, and the column."""


@dataclass(frozen=True)
class SliceColumn:
    """A ``--by`` column: its distinct values as text (as labels are: :func:`label_text`) and
    each row's code into them; ``-1`` for a missing value (an empty field, a JSON or Parquet
    null, a NaN), which is never an error: the missing rows are a slice of their own."""

    name: str
    texts: list[str]
    codes: np.ndarray


@dataclass(frozen=True)
class Columns:
    """The columns of a table needed for one evaluation, one entry per data row.

    ``scores`` has shape ``(n_rows,)`` for one score column (and no
    ``classes``), else ``(n_rows, n_columns)`` in the order asked for;
    ``by`` the slice columns asked for, in that order.
    """

    labels: Sequence[str]  # a Labels from the readers (texts and codes), or any sequence of str
    scores: np.ndarray
    weights: np.ndarray | None
    by: tuple[SliceColumn, ...] = ()


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
            sys.stderr.write("\r" + " " * (len(self.name) + 30))
            sys.stderr.write("\r")  # a write of its own: the CLI's stderr keeps only a leading carriage return
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
_MAX_NAMES = 20
_MAX_TEXT = 80


def _clip(value: Any) -> str:
    """``repr(value)``, at most about 80 characters (messages stay one short line; the length
    given is the value's, not its escaped ``repr``'s)."""
    text = repr(value)
    if len(text) > _MAX_TEXT:
        n = len(value) if isinstance(value, (str, bytes)) else len(text)
        text = text[: _MAX_TEXT - 20] + f"... ({n} characters)"
    return text


def _short(exc: Any) -> str:
    """An error's text for a message: its first line, printable, at most 80 characters."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 3] + "..."


def _names(names: Sequence[Any], what: str = "columns") -> str:
    """The first 20 names, then ``... (N columns)``."""
    shown = ", ".join(_clip(n) for n in list(names[:_MAX_NAMES]))
    if len(names) > _MAX_NAMES:
        shown += f", ... ({len(names)} {what})"
    return shown


class _Retry(Exception):
    """The fast parser cannot give the exact message or rows: read again with the exact one."""


#: every integer of magnitude at most 2**53 is a float64; beyond it, neighbouring integers round to one float
_EXACT = 2**53


def beyond_message(what: str, value: Any, text: bool = False) -> str:
    """The message for an integer score or weight beyond 2**53 (Parquet and ``.npz`` integer columns,
    integers written as text or JSON); ``text``: the value was written, so it may be written as a float."""
    shown = str(value).strip()
    if len(shown) > 40:
        shown = f"{shown[:20]}... ({len(shown.lstrip('+-'))} digits)"
    message = (f"{what} {shown} is an integer beyond 2**53, which a float64 cannot hold exactly (neighbouring "
               "values would tie); rescale the column (e.g. subtract its minimum) or pass the arrays to the library")
    if text:
        message += ", or write the numbers as floats (with a decimal point or an exponent) if rounding is intended"
    return message


def _beyond_rows(values: np.ndarray) -> np.ndarray:
    """The rows (sorted) of a float64 column or columns where a value is at least 2**53 in magnitude (or
    infinite), block by block: where a number read from text may have been an integer beyond 2**53.  The
    common case (none) costs two reductions (``fmax`` / ``fmin`` pass over NaN), 0.2 ms per 1e6 values."""
    found = []
    for start in range(0, len(values), _BLOCK):
        part = values[start:start + _BLOCK]
        if part.size and (np.fmax.reduce(part, axis=None) >= _EXACT or np.fmin.reduce(part, axis=None) <= -_EXACT):
            found.append(start + np.flatnonzero((np.abs(part) >= _EXACT).reshape(len(part), -1).any(axis=1)))
    return np.concatenate(found) if found else np.zeros(0, dtype=np.intp)


def _stem(path: str) -> str:
    name = path.lower()
    return name[:-3] if name.endswith(".gz") else name


def default_delimiter(path: str) -> str:
    """The field delimiter of a delimited file by its name: tab for ``.tsv`` / ``.tab``, else comma."""
    return "\t" if _stem(path).endswith((".tsv", ".tab")) else ","


_delimiter_for = default_delimiter


_WHOLE_ROWS = 1 << 16
"""Rows of a chunk when a whole file is read (joined by :func:`_concat`): the exact readers hold a chunk's
rows as Python objects, about 280 bytes a row (a whole JSON Lines file of 1e7 rows took 2.8 GB)."""
_BLOCK = 1 << 20  # rows per block of the checks and conversions that would otherwise need a full-size temporary


def _code_dtype(k: int) -> np.dtype:
    """The smallest integer type that holds the codes of ``k`` distinct labels (unsigned up to 2**32)."""
    for kind in (np.uint8, np.uint16, np.uint32):
        if k <= int(np.iinfo(kind).max) + 1:
            return np.dtype(kind)
    return np.dtype(np.int64)


def _counts(codes: np.ndarray, k: int) -> np.ndarray:
    """``numpy.bincount(codes, minlength=k)`` block by block: ``bincount`` converts small integer codes to
    ``intp``, a copy of 8 bytes a row."""
    out = np.zeros(k, dtype=np.int64)
    for start in range(0, len(codes), _BLOCK):
        out += np.bincount(codes[start:start + _BLOCK], minlength=k)[:k]
    return out


def _remap(lookup: np.ndarray, codes: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``lookup[codes]`` block by block, into ``out`` (new, of ``lookup``'s dtype, when None): indexing
    converts small integer codes to ``intp`` first, a copy of 8 bytes a row."""
    if out is None:
        out = np.empty(len(codes), dtype=lookup.dtype)
    for start in range(0, len(codes), _BLOCK):
        out[start:start + _BLOCK] = lookup[codes[start:start + _BLOCK]]
    return out


def _small(codes: np.ndarray, k: int) -> np.ndarray:
    """``codes`` of ``k`` distinct labels in the smallest integer type (no copy when already)."""
    dtype = _code_dtype(k)
    if codes.dtype == dtype:
        return codes
    out = np.empty(len(codes), dtype=dtype)
    for start in range(0, len(codes), _BLOCK):
        out[start:start + _BLOCK] = codes[start:start + _BLOCK]
    return out


class Labels(Sequence[str]):
    """The labels of a column as their distinct texts and one integer code per row (the smallest
    integer type: 1 byte a row for up to 256 distinct labels), read as a sequence of ``str``
    (``len``, indexing, iteration, ``==`` with a list).  No string is made per row:
    ``numpy.array(labels)`` is one ``take`` of the texts, :func:`label_counts` one ``bincount``,
    and :meth:`positive` the boolean column of one label.

    Examples
    --------
    >>> import numpy as np
    >>> labels = Labels(["no", "yes"], np.array([0, 1, 1, 0]))
    >>> labels.codes.dtype, len(labels), labels[1], list(labels[2:])
    (dtype('uint8'), 4, 'yes', ['yes', 'no'])
    >>> labels == ["no", "yes", "yes", "no"], labels.positive("yes").tolist()
    (True, [False, True, True, False])
    """

    __slots__ = ("texts", "codes")

    def __init__(self, texts: list[str], codes: np.ndarray) -> None:
        self.texts = list(texts)
        self.codes = _small(np.asarray(codes), len(self.texts))

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return Labels(*_compact(self.texts, self.codes[i]))
        return self.texts[self.codes[i]]

    def __iter__(self) -> Iterator[str]:
        texts = self.texts
        for start in range(0, len(self.codes), _BLOCK):
            yield from map(texts.__getitem__, self.codes[start:start + _BLOCK].tolist())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Labels, list, tuple)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        shown = list(self[:6]) if len(self) > 6 else list(self)
        return f"Labels({shown}{' + ...' if len(self) > 6 else ''}, {len(self)} rows)"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = np.array(self.texts, dtype=str)[self.codes] if self.texts else np.array([], dtype=str)
        return out if dtype is None else out.astype(dtype)

    def positive(self, label: str) -> np.ndarray:
        """The rows whose label is ``label``, as a boolean array."""
        k = self.texts.index(label) if label in self.texts else -1
        if k < 0:
            return np.zeros(len(self.codes), dtype=bool)
        if k == 1 and len(self.texts) == 2:  # codes 0 and 1 only: the codes are the mask (a read-only view)
            view = self.codes.view(np.bool_)
            view.flags.writeable = False
            return view
        return self.codes == self.codes.dtype.type(k)


def _compact(texts: list[str], codes: np.ndarray) -> tuple[list[str], np.ndarray]:
    """``texts`` and ``codes`` without the texts that no code uses."""
    used = _counts(codes, len(texts)) > 0
    if used.all():
        return texts, codes
    lookup = np.cumsum(used) - 1
    return [t for t, u in zip(texts, used.tolist()) if u], _remap(lookup.astype(_code_dtype(len(texts))), codes)


def label_counts(labels: Sequence[str]) -> Counter[str]:
    """``collections.Counter(labels)``, from the codes when the labels come from a reader
    (one ``bincount`` instead of hashing every row: 0.3-0.5 s less on 5e6 rows)."""
    if isinstance(labels, Labels):
        counts = _counts(labels.codes, len(labels.texts))
        return Counter({t: int(n) for t, n in zip(labels.texts, counts.tolist()) if n})
    return Counter(labels)


def _encode(values: Sequence[Any], codes: np.ndarray, text: Callable[[Any], str]) -> tuple[list[str], np.ndarray]:
    """Distinct label texts and codes from distinct raw values (``values[codes]`` is the column)."""
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu":
        codes = codes.astype(np.int64)
    used = _counts(codes, len(values)) > 0 if len(codes) else np.zeros(len(values), dtype=bool)
    index: dict[str, int] = {}
    remap = [index.setdefault(text(v), len(index)) if u else 0 for v, u in zip(values, used.tolist())]
    if len(index) != len(values):  # values that are unused, or equal as text
        return list(index), _remap(np.array(remap, dtype=_code_dtype(len(index))), codes)
    return list(index), _small(codes, len(index))


def _encode_list(labels: list[Any], text: Callable[[Any], str] | None = None) -> tuple[list[str], np.ndarray]:
    """Distinct texts and codes of a list (``text`` applied to each distinct value)."""
    index = {v: k for k, v in enumerate(dict.fromkeys(labels))}
    codes = np.fromiter(map(index.__getitem__, labels), dtype=np.int64, count=len(labels))
    distinct = list(index)
    return _encode(distinct, codes, text) if text is not None else (distinct, _small(codes, len(distinct)))


def _first(bad: Callable[[np.ndarray], np.ndarray], values: np.ndarray) -> tuple[int, ...] | None:
    """The index of the first element of ``values`` (1-D or 2-D, by rows) for which ``bad`` is true, block by
    block (no full-size boolean temporary); None when there is none."""
    for start in range(0, len(values), _BLOCK):
        found = bad(values[start:start + _BLOCK])
        if found.any():
            at = np.argwhere(found)[0]
            return (start + int(at[0]), *(int(x) for x in at[1:]))
    return None


def _finish(
    name: str,
    labels: list[str] | tuple[list[str], np.ndarray],
    scores: np.ndarray,
    weights: np.ndarray | None,
    *,
    label: str,
    score_columns: ScoreColumns,
    weight: str | None,
    classes: list[str] | None,
    where: Callable[[int], str],
    whole: bool = True,
    by: Sequence[tuple[str, list[str] | tuple[list[str], np.ndarray]]] = (),
    text_of: Callable[[int, int], str | None] | None = None,
) -> Columns:
    """Check the assembled columns (``where(i)`` names data row i) and shape the scores.

    ``text_of(i, j)``: the text written in row i for score column j (-1: the weight), for a
    value that is not finite (``1e400`` is quoted as written, not as ``inf``); None when unknown.

    ``labels`` and each of ``by`` (column, values) is a list of texts or (distinct texts,
    codes); an empty text is a missing slice value.  ``whole=False`` for one
    chunk of a file: the checks that need every row (some row at all, some positive
    weight) are left to :func:`_concat`."""
    texts, codes = _encode_list(labels) if isinstance(labels, list) else labels
    if whole and not len(codes):
        raise InputError(f"{name}: no data rows")
    named = set(classes or ())
    for k, t in enumerate(texts):  # once per distinct label
        problem = _label_problem(t, named)
        if problem:
            i = _first(lambda c: c == k, codes)[0]  # type: ignore[index]
            raise InputError(f"{name}: {where(i)}, column {label!r}: {problem}")
    if classes is not None:
        known = set(classes)
        bad = [k for k, t in enumerate(texts) if t not in known]
        if bad:
            i = _first(lambda c: np.isin(c, bad), codes)[0]  # type: ignore[index]
            raise InputError(
                f"{name}: {where(i)}, column {label!r}: label {_clip(texts[codes[i]])} is not a "
                f"class; the classes are the --class-columns names {_names(classes, 'classes')}"
            )
    def shown(i: int, j: int, value: Any) -> str:
        text = None if text_of is None else text_of(i, j)
        return _clip(text) if text is not None else repr(str(float(value)))

    bad_score = _first(lambda s: ~np.isfinite(s), scores)
    if bad_score is not None:
        i, j = bad_score
        at = where(int(i))
        raise InputError(
            f"{name}: {at}, column {score_columns[j][0]!r}: the score must be finite; "
            f"got {shown(int(i), int(j), scores[i, j])}"
        )
    if weights is not None:
        bad_weight = _first(lambda w: ~np.isfinite(w) | (w < 0) | ((w < SMALLEST_WEIGHT) & (w != 0)), weights)
        if bad_weight is not None:
            i = bad_weight[0]
            at = where(i)
            raise InputError(
                f"{name}: {at}, column {weight!r}: the weight must be finite and "
                f"non-negative, 0 or at least {SMALLEST_WEIGHT!r}; got {shown(i, -1, weights[i])}"
            )
        if whole and not weights.any():
            raise InputError(f"{name}: column {weight!r}: every weight is zero; at least one must be positive")
    if classes is None and scores.shape[1] == 1:
        scores = scores[:, 0]
    return Columns(Labels(texts, codes), scores, weights, tuple(_slice_column(c, v) for c, v in by))


def _slice_column(name: str, values: list[str] | tuple[list[str], np.ndarray]) -> SliceColumn:
    """A slice column from texts or (distinct texts, codes): a missing text (:func:`_missing_text`: empty,
    a NaN, ``NA``, ``null``, ...) as code -1."""
    texts, codes = _encode_list(values) if isinstance(values, list) else values
    codes = np.asarray(codes, dtype=np.int64)
    missing = [_missing_text(t) for t in texts]
    if any(missing):
        lookup = np.cumsum([not m for m in missing], dtype=np.int64) - 1
        lookup[np.array(missing, dtype=bool)] = -1
        codes = lookup[codes] if len(codes) else codes
        texts = [t for t, m in zip(texts, missing) if not m]
    return SliceColumn(name, list(texts), np.asarray(codes, dtype=np.int64))


def _missing_text(text: str) -> bool:
    """Whether a label or slice value as text is missing: empty, a NaN in any spelling, or a text pandas'
    ``read_csv`` reads as missing (:data:`MISSING_LABELS`: ``NA``, ``null``, ``None``, ...).  One rule for
    every format: a label that is missing is an error (unless named as a class), a slice value that is
    missing is the slice ``(missing)``."""
    return not text or text in MISSING_LABELS or text.lower().lstrip("+-") == "nan"


def slice_text(value: Any) -> str:
    """A slice value as text (:func:`label_text`); missing (None, NaN, a missing text such as ``NA``:
    :func:`_missing_text`) as the empty text."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    text = label_text(value)
    return "" if _missing_text(text) else text


def _join_slices(name: str, parts: Sequence[SliceColumn]) -> SliceColumn:
    """One slice column from its chunks, the codes remapped to one list of texts."""
    index: dict[str, int] = {}
    codes = []
    for part in parts:
        remap = np.array([index.setdefault(x, len(index)) for x in part.texts] + [-1], dtype=np.int64)
        codes.append(remap[part.codes])  # code -1 takes the last entry: -1
    return SliceColumn(name, list(index), np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64))


# The texts pandas' ``read_csv`` reads as missing (its default ``na_values``); any spelling
# of NaN (what ``float`` reads as NaN) is missing too, in every format.
MISSING_LABELS = frozenset({"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
                            "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"})


def _label_problem(text: str, classes: set[str]) -> str | None:
    """Why a (distinct) label text cannot be a label, or None.

    Missing: empty, a NaN (any spelling), or a text pandas reads as missing (``NA``,
    ``null``, ``None``, ...) unless it is named as a class.  Not text: a lone surrogate
    (a JSON ``\\ud800`` escape), which no output can print."""
    if not text:
        return "empty label; every row needs a label: fill it in or remove the row"
    nan = text.lower().lstrip("+-") == "nan"
    if nan or (_missing_text(text) and text not in classes):
        return (f"missing label ({_clip(text)}, which {'is NaN' if nan else 'pandas reads as missing'}); "
                "every row needs a label: fill it in or remove the row")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return f"the label {_clip(text)} is not valid Unicode text (a lone surrogate escape)"
    return None


def label_problem(text: str) -> str | None:
    """Why a label's text (:func:`label_text`) cannot be a label of binary input, or None: missing
    (empty, a NaN, :data:`MISSING_LABELS`) or not valid Unicode; the readers' rule, for the engines
    that read a column otherwise (Spark, dask on a remote file)."""
    return _label_problem(text, set())


def label_text(value: Any) -> str:
    """A label as the CLI compares it: booleans as true/false, integral floats as integers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


# ---------------------------------------------------------------------------
# delimited text
def _kind_of_file(mode: int) -> str | None:
    """What a file that is not a regular file is (None for a regular file)."""
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a pipe"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


def _open_binary(path: str) -> IO[bytes]:
    try:
        kind = _kind_of_file(os.stat(path).st_mode)
        if kind == "a directory":
            raise InputError(f"{path}: is a directory, not a file")
        if kind is not None:  # /dev/zero, /dev/stdin, a FIFO: endless or read once, of no known size
            raise InputError(f"{path}: is {kind}, not a regular file; precall reads a file by its size and more "
                             "than once: save the data to a file first (e.g. cmd > scores.csv)")
        return open(path, "rb")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot open: {exc.strerror or exc}") from None


def _open_bytes(path: str, progress: _Progress) -> IO[bytes]:
    """``path`` (plain or gzip'd) as bytes, counting the bytes read for ``progress``."""
    raw: IO[bytes] = io.BufferedReader(_Counting(_open_binary(path), progress), 1 << 20)
    if path.lower().endswith(".gz"):
        raw = gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[assignment]
    return raw


def _open_text(path: str, progress: _Progress) -> IO[str]:
    """``path`` (plain or gzip'd) as UTF-8 text, counting the bytes read for ``progress``."""
    return io.TextIOWrapper(_open_bytes(path, progress), encoding="utf-8-sig", errors="surrogateescape",
                            newline="")


def _csv_rows(reader: Any, kept: list[str], name: str) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line number where the row starts, fields)``; ``kept``: the lines read for the
    current row (:func:`_csv_reader`), cleared before each row."""
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        kept.clear()
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            if str(exc) == "unexpected end of data":  # (strict) a quoted field still open at the end
                raise InputError(_unclosed_quote(reader, kept, start, header, name)) from None
            raise InputError(f"{name}: line {start}: malformed CSV: {_short(exc)}") from None
        except UnicodeDecodeError:
            raise InputError(f"{name}: line {start}: not valid UTF-8 text") from None
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            raise InputError(f"{name}: cannot read: {_short(exc)}") from None
        try:  # decoded with surrogateescape, so the line of a bad byte is known
            "".join(row).encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{name}: line {start}: not valid UTF-8 text") from None
        if header is None:
            header = [h.strip() for h in row]
        yield start, row


def _unclosed_quote(reader: Any, kept: list[str], start: int, header: list[str] | None, name: str) -> str:
    """The message for a row (from line ``start``, its lines ``kept``) whose last quoted field is not
    closed at the end of the file: the line where that field begins and its column."""
    row = next(csv.reader(kept, dialect=reader.dialect, strict=False), [""])  # that field runs to the end
    field = row[-1]
    breaks = field.count("\n") + field.count("\r") - field.count("\r\n")  # line breaks after its quote
    line = start + len(kept) - 1 - breaks + (bool(kept) and kept[-1].endswith(("\n", "\r")))
    k = len(row) - 1
    column = f"column {header[k]!r}" if header is not None and k < len(header) else f"field {k + 1}"
    return (f"{name}: line {line}, {column}: a quoted field is not closed before the end of the file; "
            f"close it with '\"' (a '\"' inside a quoted field is written '\"\"')")


_DELIMITER_NAMES = {"\t": "tab", ";": "';'", "|": "'|'", ",": "','"}


def _column_index(header: list[str], column: str, option: str, name: str, where: str,
                  delimiter: str | None = None) -> int:
    matches = [i for i, h in enumerate(header) if h == column]
    if not matches:
        hint = ""
        if len(header) == 1 and delimiter is not None:
            for d, shown in _DELIMITER_NAMES.items():
                if d != delimiter and d in header[0]:
                    hint = (f"; the header is one column containing {shown}: it looks delimited by {shown}, "
                            f"give --delimiter {'tab' if d == chr(9) else d}")
                    break
        raise InputError(
            f"{name}: {where}: no column {_clip(column)} (given by {option}); the columns are "
            f"{_names(header)}{hint}"
        )
    if len(matches) > 1:
        raise InputError(
            f"{name}: {where}: column {_clip(column)} (given by {option}) appears {len(matches)} times, "
            f"as fields {_names([i + 1 for i in matches], 'fields')}"
        )
    return matches[0]


#: a number of delimited text, as pyarrow's and numpy's parsers read one: ASCII digits, a decimal point, an
#: exponent, a sign, or a spelling of NaN or infinity, between spaces or tabs (``float`` reads more: ``1_000``,
#: full-width and other Unicode digits, other white space)
_NUMBER_TEXT = re.compile(r"[ \t]*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|nan|inf|infinity)[ \t]*",
                          re.ASCII | re.IGNORECASE)


_UNICODE_SPACE = re.compile("[\x0b\x0c\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def _number(text: str, what: str, column: str, where: str, name: str) -> float:
    """A score or weight field of delimited text as a float (:data:`_NUMBER_TEXT`); an integer written beyond
    2**53 is refused (``int`` reads the text: no decimal point, no exponent), as an integer column of Parquet is."""
    try:
        value = float(text)
        if "_" in text or not text.isascii() or text.strip(" \t") != text.strip():  # (:data:`_NUMBER_TEXT`,
            # faster: ``float`` reads of ASCII without "_" and other white space just what the parsers read)
            raise InputError(f"{name}: {where}, column {column!r}: {what} must be a number; got {_clip(text)}, which "
                             "is not one in ASCII digits: write it as 0.25, -3, 1e-3 (a decimal point, no "
                             "separators)")
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        shown = "an empty field" if not text.strip() else _clip(text)
        raise InputError(f"{name}: {where}, column {column!r}: {what} must be a number; got {shown}") from None
    if not -_EXACT < value < _EXACT and value - value == 0:  # finite, 2**53 or more: rare, then the text
        try:
            exact = int(text)
        except ValueError:  # a float's text (a decimal point, an exponent): rounding is what it asks for
            return value
        if not -_EXACT <= exact <= _EXACT:
            raise InputError(f"{name}: {where}, column {column!r}: {beyond_message(what, text, text=True)}")
    return value


def _concat(name: str, chunks: Iterator[Columns], weight: str | None, empty: str) -> Columns:
    """One Columns from a file's chunks, with the checks that need every row.  Each chunk is
    copied into the whole columns as it comes and released; the whole columns grow in place
    (``realloc``: pages are remapped, not copied), so a file's rows are held once, not twice."""
    whole = None
    index: dict[str, int] = {}
    n = 0
    codes = scores = weights = np.empty(0)
    by: list[list[SliceColumn]] = []
    for k, part in enumerate(chunks):
        if k == 0:
            whole = part
            continue
        if k == 1:  # a second chunk: the whole columns begin
            first, whole = whole, None
            assert first is not None
            by = [[c] for c in first.by]
            n, index, codes, scores, weights = _begin(first, weight, 2 * len(first.labels) + len(part.labels))
        labels = part.labels if isinstance(part.labels, Labels) else Labels(*_encode_list(list(part.labels)))
        lookup = [index.setdefault(t, len(index)) for t in labels.texts] or [0]
        stop = n + len(labels)
        if stop > len(codes):  # grow by half
            size = max(stop, len(codes) + len(codes) // 2)
            codes, scores = _grown(codes, size), _grown(scores, size)
            weights = None if weights is None else _grown(weights, size)
        if _code_dtype(len(index)) != codes.dtype:
            codes = codes.astype(_code_dtype(len(index)))
        _remap(np.array(lookup, dtype=codes.dtype), labels.codes, codes[n:stop])
        scores[n:stop] = part.scores
        if weights is not None:
            weights[n:stop] = part.weights  # type: ignore[index]
        for parts, c in zip(by, part.by):
            parts.append(c)
        n = stop
        del part, labels
    if whole is None and n:
        codes, scores = _grown(codes, n), _grown(scores, n)
        weights = None if weights is None else _grown(weights, n)
        whole = Columns(Labels(list(index), codes), scores, weights, tuple(_join_slices(p[0].name, p) for p in by))
    rows = 0 if whole is None else len(whole.labels)
    weighted = whole is not None and whole.weights is not None and bool(whole.weights.any())
    check_whole_file(name, rows, weight if whole is not None and whole.weights is not None else None, weighted,
                     empty)
    assert whole is not None  # some row (checked)
    return whole


def check_whole_file(name: str, rows: int, weight: str | None, weighted: bool, empty: str | None = None) -> None:
    """The checks of a file that need every row, read at once or in chunks (``--stream``, the dask
    engine's pass): some data row (``empty``: the message, by default :func:`no_rows_text` of
    ``name``), and with a weight column some positive weight (``weighted``)."""
    if not rows:
        raise InputError(f"{name}: {no_rows_text(name) if empty is None else empty}")
    if weight is not None and not weighted:
        raise InputError(f"{name}: column {weight!r}: every weight is zero; at least one must be positive")


def no_rows_text(path: str) -> str:
    """What a file without data rows is told: delimited text has a header line before them."""
    return "no data rows after the header (line 1)" if file_format(path) == "delimited" else "no data rows"


def _begin(first: Columns, weight: str | None, size: int
           ) -> tuple[int, dict[str, int], np.ndarray, np.ndarray, np.ndarray | None]:
    """The whole columns of :func:`_concat`, room for ``size`` rows, holding the first chunk."""
    labels = first.labels if isinstance(first.labels, Labels) else Labels(*_encode_list(list(first.labels)))
    n = len(labels)
    codes = np.empty(size, dtype=labels.codes.dtype)
    codes[:n] = labels.codes
    scores = np.empty((size, *first.scores.shape[1:]), dtype=first.scores.dtype)
    scores[:n] = first.scores
    weights = None
    if weight is not None:
        weights = np.empty(size, dtype=np.float64)
        weights[:n] = first.weights
    return n, {t: k for k, t in enumerate(labels.texts)}, codes, scores, weights


def _grown(values: np.ndarray, size: int) -> np.ndarray:
    """``values`` (an array of its own, no view of it alive) resized in place to ``size`` rows, the first
    ones kept: ``realloc``, which moves a large block by remapping its pages, not by copying them."""
    values.resize((size, *values.shape[1:]), refcheck=False)
    return values


@dataclass(frozen=True)
class _Header:
    width: int
    i_label: int
    i_scores: list[tuple[str, int]]
    i_weight: int | None
    lines: int  # the header's lines (1 unless a quoted name holds a line break)
    i_by: list[tuple[str, int]]


def _header(first: tuple[int, list[str]] | None, next_line: int, name: str, *, label: str,
            score_columns: ScoreColumns, weight: str | None, delimiter: str, by: Sequence[str] = ()) -> _Header:
    if first is None:
        raise InputError(f"{name}: empty file (no header line, no data rows)")
    header = [h.strip() for h in first[1]]
    if not any(header):
        raise InputError(f"{name}: line 1: the first line must be a header naming the columns")
    head = "line 1 (header)"
    i_label = _column_index(header, label, "--label", name, head, delimiter)
    i_scores = [(col, _column_index(header, col, option, name, head, delimiter)) for col, option in score_columns]
    i_weight = None if weight is None else _column_index(header, weight, "--weight", name, head, delimiter)
    i_by = [(col, _column_index(header, col, "--by", name, head, delimiter)) for col in by]
    return _Header(len(header), i_label, i_scores, i_weight, next_line - 1, i_by)


def _delimited_chunks(
    stream: IO[str], name: str, *, label: str, score_columns: ScoreColumns, weight: str | None,
    delimiter: str, classes: list[str] | None, chunk_rows: int, field_limit: int = sys.maxsize,
    by: Sequence[str] = (),
) -> Iterator[Columns]:
    """The exact reader (stdlib ``csv``, strict): every message names its line."""
    reader, kept = _csv_reader(stream, delimiter, field_limit, name=name)
    rows = _csv_rows(reader, kept, name)
    h = _header(next(rows, None), reader.line_num + 1, name, label=label, score_columns=score_columns,
                weight=weight, delimiter=delimiter, by=by)
    i_label, i_scores, i_weight, width = h.i_label, h.i_scores, h.i_weight, h.width

    labels: list[str] = []
    scores: list[list[float]] = []
    weights: list[float] = []
    lines: list[int] = []
    groups: list[list[str]] = [[] for _ in h.i_by]

    written: dict[tuple[int, int], str] = {}  # (row of the chunk, column) -> the text of a non-finite number

    def flush() -> Columns:
        s = np.array(scores, dtype=np.float64).reshape(len(labels), len(i_scores))
        w = np.array(weights, dtype=np.float64) if weight is not None else None
        at, texts = list(lines), dict(written)
        written.clear()
        return _finish(name, list(labels), s, w, label=label, score_columns=score_columns, weight=weight,
                       classes=classes, where=lambda i: f"line {at[i]}", whole=False,
                       by=[(c, list(g)) for (c, _), g in zip(h.i_by, groups)],
                       text_of=lambda i, j: texts.get((i, j)))

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
            wanted = [(label, i_label), *i_scores, (weight, i_weight), *h.i_by]
            missing = [c for c, i in wanted if i is not None and i >= len(row)]
            detail = f", so column {missing[0]!r} is missing" if missing else ""
            hint = ""
            if len(row) == 1 and width > 1:
                for d, shown in _DELIMITER_NAMES.items():
                    if d != delimiter and d in row[0]:
                        hint = f"; the line looks delimited by {shown}: give --delimiter {'tab' if d == chr(9) else d}"
                        break
            raise InputError(f"{name}: line {line}: {len(row)} fields, the header has {width}{detail}{hint}")
        where = f"line {line}"
        labels.append(row[i_label].strip())
        values = [_number(row[i], "the score", col, where, name) for col, i in i_scores]
        scores.append(values)
        if i_weight is not None:
            values = [*values, _number(row[i_weight], "the weight", weight, where, name)]  # type: ignore[arg-type]
            weights.append(values[-1])
        total = sum(values)
        if total - total != 0:  # a NaN or an infinity: its text, for the message
            fields = [i for _, i in i_scores] + ([i_weight] if i_weight is not None else [])
            for j, (i, v) in enumerate(zip(fields, values)):
                if not math.isfinite(v):
                    written[(len(labels) - 1, j if j < len(i_scores) else -1)] = row[i].strip()
        for g, (_, i) in zip(groups, h.i_by):
            g.append(row[i].strip())
        lines.append(line)
        if len(labels) >= chunk_rows:
            yield flush()
            labels.clear(), scores.clear(), weights.clear(), lines.clear()
            for g in groups:
                g.clear()
    if labels:
        yield flush()


class _Scan(io.RawIOBase):
    """The bytes a fast parser is given, checked first (vectorised, block by block): they
    must be valid UTF-8 (pyarrow does not check the columns it does not convert) and, for
    JSON Lines (``shape``), keep one value per line, nested at most ``MAX_JSON_DEPTH``
    levels (see :class:`_JsonShape`).  Bytes that fail are never handed over: the read
    raises :class:`_Retry` (and ``failed`` is set, whatever pyarrow makes of the error).

    For delimited text (``shape=None``) it also notes whether a quote character occurs
    (then line numbers no longer follow row numbers) and holds back line breaks at the very
    end (trailing empty lines are allowed; any other empty line is left for the parser to
    reject: it reads a row of one field).  Given the ``delimiter`` (pyarrow's parser), it
    checks the quotes too (:meth:`_quotes`): pyarrow reads a quoted field still open at the
    end of the file as one running to it, and ``"a"b`` as ``ab``; the ``csv`` module refuses both."""

    def __init__(self, raw: IO[bytes], shape: _JsonShape | None = None, utf8: bool = True,
                 delimiter: str | None = None) -> None:
        self.raw, self.pending = raw, b""
        self.quote = False
        self.shape = shape
        self.failed = False
        self.utf8 = codecs.getincrementaldecoder("utf-8")() if utf8 else None
        self.bounds: np.ndarray | None = None  # the bytes a quoted field may follow or precede
        if delimiter is not None:
            self.bounds = np.zeros(256, dtype=bool)
            self.bounds[[*delimiter.encode("utf-8")[-1:], ord("\n"), ord("\r"), ord('"')]] = True
        self.quotes = 0  # the quote characters so far
        self.last = ord("\n")  # the byte before the next block (the file's start is a line's)
        self.closing = False  # the last block ended with a closing quote (the next byte must bound it)
        self.head, self.offset = b"", 0  # the file's first 3 bytes (a BOM?), the bytes checked

    def readable(self) -> bool:
        return True

    def _check(self, data: bytes) -> None:
        try:
            if self.utf8 is not None and not (data.isascii() and not self.utf8.getstate()[0]):
                self.utf8.decode(data, final=not data)  # (ASCII needs no decoding: a fast C test)
        except UnicodeDecodeError:
            self.failed = True
        if data and self.shape is not None and not self.shape.scan(data):
            self.failed = True
        if self.bounds is not None and not self._quotes(data):
            self.failed = True
        if self.failed:
            raise _Retry

    def _quotes(self, data: bytes) -> bool:
        """Whether the quotes so far (``data`` the next block, empty at the end) are those of quoted
        fields as the strict ``csv`` module reads them (vectorised).  The k-th quote opens a field
        when k is even, else closes it (a ``""`` inside a field is a close and an open): an opening
        quote must begin a field (or follow a closing quote), a closing one end it (or precede an
        opening one), and none may be open at the end.  Anything else (also a quote inside an
        unquoted field, which both read as text) is left to the exact reader."""
        assert self.bounds is not None
        if not data:
            return self.quotes % 2 == 0
        a = np.frombuffer(data, dtype=np.uint8)
        self.head += data[:3 - len(self.head)]
        if self.closing and not self.bounds[a[0]]:
            return False
        at = np.flatnonzero(a == ord('"'))
        if len(at):
            opening = (np.arange(len(at)) + self.quotes) % 2 == 0
            before = self.bounds[a[at - 1]]
            before[at == 0] = self.bounds[self.last]
            if self.head == codecs.BOM_UTF8:  # a quote right after it begins a field
                before[at == 3 - self.offset] = True
            last = at == len(a) - 1
            after = self.bounds[a[np.minimum(at + 1, len(a) - 1)]] | last
            if (opening & ~before).any() or (~opening & ~after).any():
                return False
            self.closing = bool(last[-1] and not opening[-1])
            self.quotes += len(at)
        else:
            self.closing = False
        self.last, self.offset = int(a[-1]), self.offset + len(a)
        return True

    def read(self, n: int = -1) -> bytes:  # type: ignore[override]
        while True:
            data = self.raw.read(n)
            self._check(data)
            if self.shape is not None or not data:
                return data if self.shape is not None else b""
            if not self.quote and b'"' in data:
                self.quote = True
            data = self.pending + data
            kept = data.rstrip(b"\r\n")
            self.pending = data[len(kept):]
            if kept:
                return kept

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.raw.close()
        super().close()


def _dictionary_codes(pa: Any, column: Any, text: Callable[[Any], str]) -> tuple[list[str], np.ndarray]:
    """Distinct texts and codes of an Arrow column (dictionary-encoded, chunked or not), chunk by
    chunk: no unification of the chunks' dictionaries, no string per row."""
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    index: dict[str, int] = {}
    parts = []
    for chunk in chunks:
        if not pa.types.is_dictionary(chunk.type):
            chunk = pa.compute.dictionary_encode(chunk)
        values = chunk.dictionary.to_pylist()
        remap = [index.setdefault(text(v), len(index)) for v in values] or [0]
        parts.append(_remap(np.array(remap, dtype=_code_dtype(len(index))), chunk.indices.to_numpy(zero_copy_only=False)))
    dtype = _code_dtype(len(index))
    codes = np.concatenate([p.astype(dtype, copy=False) for p in parts]) if parts else np.zeros(0, dtype=dtype)
    return _encode(list(index), codes, lambda t: t)  # drops texts that no row uses


def _arrow_slices(pa: Any, column: Any) -> tuple[list[str], np.ndarray]:
    """Distinct texts and codes of an Arrow slice column (:func:`slice_text`: nulls and NaN as the
    empty text, a missing value); strings, integers and booleans as text by Arrow's cast."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    if pa.types.is_null(column.type):
        return [""], np.zeros(len(column), dtype=np.int64)
    if not pa.types.is_dictionary(column.type):
        column = pa.compute.dictionary_encode(column)
    dictionary = column.dictionary
    kind = dictionary.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind) or \
            pa.types.is_boolean(kind):
        texts = pa.compute.utf8_trim_whitespace(pa.compute.cast(dictionary, pa.string())).to_pylist()
    else:
        texts = [slice_text(v) for v in dictionary.to_pylist()]
    codes = column.indices.fill_null(len(texts)).to_numpy(zero_copy_only=False).astype(np.int64)
    return _encode([*texts, ""], codes, lambda x: x)  # equal texts merged, nulls as the empty text


def _arrow_columns(table: Any) -> dict[str, Any]:
    """The columns of an Arrow table or record batch by name (the dict can release them one by one)."""
    return {c: table.column(k) for k, c in enumerate(table.schema.names)}


def _fill(out: np.ndarray, column: Any) -> None:
    """Copy a numeric Arrow column (chunked or not) into ``out``, chunk by chunk (no concatenated copy)."""
    start = 0
    for chunk in getattr(column, "chunks", [column]):
        out[start:start + len(chunk)] = chunk.to_numpy(zero_copy_only=False)
        start += len(chunk)


def _pyarrow() -> Any:
    try:
        import pyarrow
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return None
    return pyarrow


def _arrow_chunks(path: str, name: str, h: _Header, *, label: str, score_columns: ScoreColumns,
                  weight: str | None, delimiter: str, classes: list[str] | None, chunk_rows: int,
                  whole: bool, meter: _Progress, header_bytes: int, by: Sequence[str] = ()) -> Iterator[Columns]:
    """pyarrow's CSV reader (multithreaded) in blocks of 1 MB, each converted to a chunk (the whole file
    too: :func:`_concat` joins the chunks)."""
    pa = _pyarrow()
    pcsv = pa.csv
    names = [f"f{i}" for i in range(h.width)]
    types = {names[h.i_label]: pa.dictionary(pa.int32(), pa.string())}
    for _, i in h.i_scores:
        types[names[i]] = pa.float64()
    if h.i_weight is not None:
        types[names[h.i_weight]] = pa.float64()
    for _, i in h.i_by:
        types[names[i]] = pa.dictionary(pa.int32(), pa.string())
    include = list(dict.fromkeys([names[h.i_label], *(names[i] for _, i in h.i_scores)]
                                 + ([names[h.i_weight]] if h.i_weight is not None else [])
                                 + [names[i] for _, i in h.i_by]))
    block = max(1 << 20, 2 * header_bytes + 1024)  # pyarrow reads about 40 blocks ahead: 1 MB, not 4
    read = pcsv.ReadOptions(skip_rows=h.lines, column_names=names, block_size=block, use_threads=True)
    parse = pcsv.ParseOptions(delimiter=delimiter, quote_char='"', double_quote=True, escape_char=False,
                              newlines_in_values=True, ignore_empty_lines=False)
    convert = pcsv.ConvertOptions(include_columns=include, column_types=types, null_values=[], true_values=[],
                                  false_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False)
    scan = _Scan(_open_bytes(path, meter), delimiter=delimiter)
    first_line = h.lines + 1  # the line of the first data row

    def columns_of(columns: dict[str, Any], row0: int) -> Columns:
        # the columns of a batch or of the whole table (:func:`_arrow_columns`), each released once
        # converted (the label's before the scores are copied: its dictionary indices are 4 bytes a row)
        labels = _dictionary_codes(pa, columns[names[h.i_label]], str.strip)
        by = [(c, _dictionary_codes(pa, columns[names[i]], str.strip)) for c, i in h.i_by]
        for c in [h.i_label, *(i for _, i in h.i_by)]:
            columns.pop(names[c], None)
        n = len(labels[1])
        s = np.empty((n, len(h.i_scores)))
        for j, (_, i) in enumerate(h.i_scores):
            _fill(s[:, j], columns[names[i]])
        w = None
        if h.i_weight is not None:
            w = np.empty(n)
            _fill(w, columns[names[h.i_weight]])
        del columns
        if scan.quote:  # line numbers no longer follow row numbers: the exact reader checks the text
            if len(_beyond_rows(s)) or (w is not None and len(_beyond_rows(w))):
                raise _Retry
        else:
            _check_beyond(name, h, s, w, first_line + row0, lines, delimiter, weight=weight)

        def where(i: int) -> str:
            if scan.quote:  # line numbers no longer follow row numbers
                raise _Retry
            return f"line {first_line + row0 + i}"

        return _finish(name, labels, s, w, label=label, score_columns=score_columns, weight=weight,
                       classes=classes, where=where, whole=False, by=by,
                       text_of=lambda i, j: _written(lines, h, delimiter, first_line + row0 + i, j))

    lines = _Lines(path)
    with scan:
        try:
            # the whole file too in blocks, each converted and released (the caller joins them): a
            # table of the whole file held the label's 4-byte dictionary indices and every parsed block
            reader = pcsv.open_csv(scan, read_options=read, parse_options=parse, convert_options=convert)
            done = 0
            for batch in reader:
                for start in range(0, batch.num_rows, chunk_rows):
                    yield columns_of(_arrow_columns(batch.slice(start, chunk_rows)), done)
                    done += min(chunk_rows, batch.num_rows - start)
        except (pa.ArrowException, OSError, EOFError, ValueError, zlib.error) as exc:
            if isinstance(exc, InputError) and not scan.failed:
                raise
            raise _Retry from None
        finally:
            lines.close()


class _Lines:
    """Lines of a delimited file by number, read on demand in increasing order by a second pass over the
    file (opened at the first request): the text of the rare numbers a fast parser read as 2**53 or more."""

    def __init__(self, path: str) -> None:
        self.path, self.stream, self.at = path, None, 0  # the line read last

    def get(self, numbers: np.ndarray) -> list[str]:
        """The lines ``numbers`` (increasing; ``\\n``, ``\\r\\n`` or ``\\r`` end a line, as for the parsers), each
        run of consecutive lines read at once."""
        if self.stream is None or numbers[0] <= self.at:
            self.close()
            self.stream, self.at = _open_text(self.path, _Progress(self.path, 0, False)), 0
        out: list[str] = []
        for run in np.split(numbers, np.flatnonzero(np.diff(numbers) != 1) + 1):
            skip = int(run[0]) - self.at - 1
            out += itertools.islice(self.stream, skip, skip + len(run))
            self.at = int(run[-1])
        return out + [""] * (len(numbers) - len(out))  # (the file shorter than it was)

    def close(self) -> None:
        if self.stream is not None:
            self.stream.close()
            self.stream = None


def _written(lines: _Lines, h: _Header, delimiter: str, line: int, j: int) -> str:
    """The text of score column ``j`` (-1: the weight) on ``line`` of a file without quote characters, as
    the exact reader quotes a number that is not finite."""
    fields = lines.get(np.array([line]))[0].rstrip("\r\n").split(delimiter)
    if len(fields) != h.width:
        raise _Retry  # not the row the parser read: the exact reader decides
    return fields[h.i_scores[j][1] if j >= 0 else h.i_weight].strip()  # type: ignore[index]


def _check_beyond(name: str, h: _Header, scores: np.ndarray, weights: np.ndarray | None, first_line: int,
                  lines: _Lines, delimiter: str, *, weight: str | None) -> None:
    """The fast parsers read the numbers as float64, so an integer beyond 2**53 is rounded: the lines where a
    score or weight is 2**53 or more in magnitude (none in an ordinary file: one vectorised test) are read
    again and their fields without a decimal point or an exponent checked by the exact reader's
    :func:`_number` (same rule, same message).  Row ``i`` is line ``first_line + i`` (no quote character in
    the file: a field is the text between delimiters)."""
    rows = _beyond_rows(scores)
    if weights is not None:
        rows = np.union1d(rows, _beyond_rows(weights))
    if not len(rows):
        return
    big = np.abs(scores[rows]) >= _EXACT
    checked = [(column, k, "the score") for column, k in h.i_scores]
    if weights is not None:
        big = np.column_stack([big, np.abs(weights[rows]) >= _EXACT])
        checked.append((weight, h.i_weight, "the weight"))
    texts = lines.get(first_line + rows)
    at, of = np.nonzero(big)  # by row, then by column: the exact reader's order
    for p, j in zip(at.tolist(), of.tolist()):
        fields = texts[p].rstrip("\r\n").split(delimiter)
        if len(fields) != h.width:
            raise _Retry  # not the row the parser read: the exact reader decides
        column, k, what = checked[j]
        if not ("." in fields[k] or "e" in fields[k] or "E" in fields[k]):  # integer text?
            _number(fields[k], what, column, f"line {first_line + int(rows[p])}", name)  # type: ignore[arg-type]


def _numpy_chunks(path: str, name: str, h: _Header, *, label: str, score_columns: ScoreColumns,
                  weight: str | None, delimiter: str, classes: list[str] | None, chunk_rows: int,
                  whole: bool, meter: _Progress, header_bytes: int, by: Sequence[str] = ()) -> Iterator[Columns]:
    """numpy's C ``loadtxt`` on blocks of whole lines (files without quote characters)."""
    if h.lines != 1:
        raise _Retry
    texts = {h.i_label, *(i for _, i in h.i_by)}
    cols = list(dict.fromkeys([h.i_label, *(i for _, i in h.i_scores)]
                              + ([h.i_weight] if h.i_weight is not None else []) + [i for _, i in h.i_by]))
    dtype = np.dtype([(f"f{i}", object if i in texts else np.float64) for i in cols])
    target = max(1 << 20, 2 * header_bytes + 1024)  # each block's text, str, parse and label objects: 64 MB blocks
    # made the command peak at 8.0x its columns at 1e7 rows (1 MB: 1.5x, and 15% faster)
    first_line, done = 2, 0
    lines = _Lines(path)
    with _open_bytes(path, meter) as raw:
        try:
            header = raw.readline()
            if not header.endswith(b"\n") or b"\r" in header.rstrip(b"\r\n"):
                raise _Retry  # line breaks other than \n or \r\n, or no data row
            scan = _Scan(raw, utf8=False)  # each block is decoded for loadtxt
            rest = b""
            while True:
                data = scan.read(target)
                if scan.quote:
                    raise _Retry
                if data:
                    block = rest + data
                    cut = block.rfind(b"\n") + 1 or block.rfind(b"\r") + 1
                    if cut == 0:
                        rest = block
                        continue
                    block, rest = block[:cut], block[cut:]
                else:
                    block, rest = rest, b""
                    if not block:
                        break
                text = block.decode("utf-8")
                if _UNICODE_SPACE.search(text):
                    raise _Retry  # loadtxt strips Unicode white space around a number; the exact reader refuses it
                table = np.loadtxt(io.StringIO(text, newline=None), dtype=dtype, delimiter=delimiter,
                                   comments=None, quotechar='"', usecols=cols, ndmin=1)
                n = len(table)
                breaks = text.count("\n")
                if "\r" in text:
                    breaks += text.count("\r") - text.count("\r\n")
                if breaks + (not text.endswith(("\n", "\r"))) != n:  # an empty line: loadtxt skips it
                    raise _Retry
                if text.count(delimiter) != (h.width - 1) * n:  # a row with another number of fields
                    raise _Retry
                for start in range(0, n, chunk_rows):
                    part = table[start:start + chunk_rows]
                    labels = _encode_list(part[f"f{h.i_label}"].tolist(), str.strip)
                    s = np.column_stack([part[f"f{i}"] for _, i in h.i_scores]).astype(np.float64)
                    w = None if h.i_weight is None else np.array(part[f"f{h.i_weight}"], dtype=np.float64)
                    row0 = done
                    _check_beyond(name, h, s, w, first_line + row0, lines, delimiter, weight=weight)
                    yield _finish(name, labels, s, w, label=label, score_columns=score_columns, weight=weight,
                                  classes=classes, where=lambda i, row0=row0: f"line {first_line + row0 + i}",
                                  whole=False, by=[(c, _encode_list(part[f"f{i}"].tolist(), str.strip))
                                                   for c, i in h.i_by],
                                  text_of=lambda i, j, row0=row0: _written(lines, h, delimiter,
                                                                           first_line + row0 + i, j))
                    done += len(part)
                if not data:
                    break
        except (OSError, EOFError, ValueError, zlib.error) as exc:
            if isinstance(exc, InputError):
                raise
            raise _Retry from None
        finally:
            lines.close()


def _skip(chunks: Iterator[Columns], n: int) -> Iterator[Columns]:
    """The rows of ``chunks`` after the first ``n``."""
    for chunk in chunks:
        k = len(chunk.labels)
        if n >= k:
            n -= k
            continue
        if n:
            chunk = Columns(Labels(*_encode_list(chunk.labels[n:])), chunk.scores[n:],
                            None if chunk.weights is None else chunk.weights[n:],
                            tuple(SliceColumn(c.name, c.texts, c.codes[n:]) for c in chunk.by))
            n = 0
        yield chunk


def _delimited_file(path: str, meter: _Progress, *, label: str, score_columns: ScoreColumns,
                    weight: str | None, delimiter: str, classes: list[str] | None, chunk_rows: int,
                    whole: bool, fast: str | None = "auto", by: Sequence[str] = ()) -> Iterator[Columns]:
    """A delimited file: the header by the exact reader, the rows by the fast parser while it
    can, else (from the rows not yet given) by the exact reader."""
    kw: dict[str, Any] = {"label": label, "score_columns": score_columns, "weight": weight, "classes": classes,
                          "by": by}
    first, next_line = _header_row(path, delimiter)
    h = _header(first, next_line, path, label=label, score_columns=score_columns, weight=weight,
                delimiter=delimiter, by=by)
    header_bytes = sum(len(f) + 1 for f in first[1]) if first else 0
    if fast == "auto":  # pyarrow's parser takes an ASCII delimiter only
        fast = "arrow" if _pyarrow() is not None and delimiter.isascii() else "numpy"
    if fast == "arrow" and not delimiter.isascii():
        fast = None
    parser = {"arrow": _arrow_chunks, "numpy": _numpy_chunks}.get(fast or "")
    done = 0
    numbers = [i for _, i in h.i_scores] + [h.i_weight]
    if parser is not None and len(delimiter) == 1 and delimiter not in '"\r\n' and h.i_label not in numbers and \
            not any(i in numbers for _, i in h.i_by):
        try:
            for chunk in parser(path, path, h, delimiter=delimiter, chunk_rows=chunk_rows, whole=whole,
                                meter=meter, header_bytes=header_bytes, **kw):
                yield chunk
                done += len(chunk.labels)
            return
        except _Retry:
            pass
    with _open_text(path, meter) as stream:
        yield from _skip(_delimited_chunks(stream, path, delimiter=delimiter, chunk_rows=chunk_rows,
                                           field_limit=_field_limit(path), **kw), done)


def _field_limit(path: str | None) -> int:
    """The longest field a file can hold: its size (unknown for a compressed file or a stream)."""
    if path is not None and not path.lower().endswith(".gz"):
        try:
            return os.path.getsize(path) + 1
        except OSError:
            pass
    return sys.maxsize


#: the longest header line read (characters): a file with no line break (a binary file, a gzip'd stream of
#: NULs) is refused at this length instead of being read whole into memory in search of one
MAX_HEADER_LINE = 1 << 24


#: the longest data line read from a stream whose size is unknown (a ``.gz`` file, standard input), in
#: characters: a file of one endless line (a gzip'd stream of a few MB can hold GBs of one byte) is refused
#: here instead of being read whole into memory in search of a line break; a file on disk is its own bound
MAX_STREAM_LINE = 1 << 26


def _bounded_lines(stream: IO[str], limit: int, name: str, header_limit: int | None = MAX_HEADER_LINE
                   ) -> Iterator[str]:
    """The lines of ``stream``, the first (a header) at most ``header_limit`` characters (None: no header)
    and the others ``limit``: a longer one is an :class:`InputError` naming its line."""
    number = 0
    while True:
        bound = header_limit if number == 0 and header_limit is not None else limit
        line = stream.readline(bound + 1 if bound < sys.maxsize else -1)
        if not line:
            return
        number += 1
        if len(line) > bound:
            if number == 1 and header_limit is not None:
                raise InputError(f"{name}: line 1: the header is longer than {bound} characters without a line "
                                 "break; the first line must name the columns (is this a delimited text file?)")
            raise InputError(f"{name}: line {number}: longer than {bound} characters without a line break; a "
                             "record is one line (is the file cut or not text?)")
        yield line


def _kept_lines(stream: IO[str], kept: list[str], limit: int | None = None, name: str = "",
                line_limit: int | None = None) -> Iterator[str]:
    """The lines of ``stream``, each also appended to ``kept``; the first at most ``limit`` characters,
    the others ``line_limit`` (None: no bound)."""
    if limit is None and line_limit is None:
        for line in stream:
            kept.append(line)
            yield line
        return
    for line in _bounded_lines(stream, sys.maxsize if line_limit is None else line_limit, name,
                               sys.maxsize if limit is None else limit):
        kept.append(line)
        yield line


def _csv_reader(stream: IO[str], delimiter: str, field_limit: int, header: str | None = None, name: str = ""
                ) -> tuple[Any, list[str]]:
    """The strict ``csv`` reader, its field limit (global to the module, 131,072 by default)
    raised to ``field_limit`` so that any field the file holds is read (never lowered), and the
    list its lines are kept in (:func:`_csv_rows` clears it before each row)."""
    try:
        if csv.field_size_limit() < field_limit:
            csv.field_size_limit(field_limit)
    except OverflowError:  # a C long of 32 bits
        csv.field_size_limit(2**31 - 1)
    kept: list[str] = []
    if header is not None:
        lines = _kept_lines(stream, kept, MAX_HEADER_LINE, header)
    elif field_limit >= sys.maxsize:  # a stream of unknown size (.gz, standard input): every line bounded
        lines = _kept_lines(stream, kept, MAX_HEADER_LINE, name, MAX_STREAM_LINE)
    else:
        lines = _kept_lines(stream, kept)
    return csv.reader(lines, delimiter=delimiter, strict=True), kept


def _header_row(path: str, delimiter: str) -> tuple[tuple[int, list[str]] | None, int]:
    """The first row of a delimited file (None when empty) and the line after it."""
    with _open_text(path, _Progress(path, 0, False)) as stream:
        reader, kept = _csv_reader(stream, delimiter, _field_limit(path), header=path)  # lines of bounded length
        first = next(_csv_rows(reader, kept, path), None)
        return first, reader.line_num + 1


def read_delimited(
    stream: IO[str],
    name: str,
    *,
    label: str,
    score_columns: ScoreColumns,
    weight: str | None = None,
    delimiter: str = ",",
    classes: list[str] | None = None,
    by: Sequence[str] = (),
) -> Columns:
    """Read a delimited table with a header line from a text stream (the exact reader).

    ``name`` is the file name used in messages; line numbers are the file's
    (the header is line 1).  Every data row must have as many fields as the
    header; blank lines are errors except at the very end.
    """
    chunks = _delimited_chunks(stream, name, label=label, score_columns=score_columns, weight=weight,
                               delimiter=delimiter, classes=classes, chunk_rows=_WHOLE_ROWS, by=by)
    return _concat(name, chunks, weight, "no data rows after the header (line 1)")


# ---------------------------------------------------------------------------
# JSON Lines
def _jsonl_chunks(
    stream: IO[str], name: str, *, label: str, score_columns: ScoreColumns, weight: str | None,
    classes: list[str] | None, chunk_rows: int, by: Sequence[str] = (), bounded: bool = False,
) -> Iterator[Columns]:
    """The exact JSON Lines reader; ``bounded``: a stream of unknown size, each line at most
    :data:`MAX_STREAM_LINE` characters."""
    labels: list[str] = []
    scores: list[list[float]] = []
    weights: list[float] = []
    lines: list[int] = []
    groups: list[list[str]] = [[] for _ in by]
    wanted = [(label, "--label"), *score_columns] + ([(weight, "--weight")] if weight else []) + \
        [(c, "--by") for c in by]

    written: dict[tuple[int, int], str] = {}  # (row of the chunk, column) -> the text of a non-finite number

    def flush() -> Columns:
        s = np.array(scores, dtype=np.float64).reshape(len(labels), len(score_columns))
        w = np.array(weights, dtype=np.float64) if weight is not None else None
        at, texts = list(lines), dict(written)
        written.clear()
        return _finish(name, list(labels), s, w, label=label, score_columns=score_columns, weight=weight,
                       classes=classes, where=lambda i: f"line {at[i]}", whole=False,
                       by=[(c, list(g)) for c, g in zip(by, groups)], text_of=lambda i, j: texts.get((i, j)))

    line = 0
    first_kind: str | None = None  # the kind of the first label, and its (line, value)
    first_label: tuple[int, Any] = (0, None)
    try:
        for line, text in enumerate(_bounded_lines(stream, MAX_STREAM_LINE, name, None) if bounded else stream, 1):
            record = _json_record(text, line, name)
            if record is None:
                continue  # blank lines carry no record in JSON Lines
            if type(record) is _Repeated:
                _repeated_keys(record, [c for c, _ in wanted], line, name)
            for column, option in wanted:
                if column not in record:
                    raise InputError(
                        f"{name}: line {line}: no key {_clip(column)} (given by {option}); the keys are "
                        f"{_names(list(record), 'keys')}"
                    )
            value = record[label]
            if value is None:
                raise InputError(f"{name}: line {line}, column {label!r}: missing label (null); every row "
                                 "needs a label: fill it in or remove the row")
            if isinstance(value, (dict, list)):
                raise InputError(f"{name}: line {line}, column {label!r}: the label must be a string or a "
                                 f"number; got {_clip(value)}")
            if isinstance(value, _HugeInt):
                raise InputError(f"{name}: line {line}, column {label!r}: the label is a number of {len(value)} "
                                 "digits, more than Python converts; write it as a string")
            kind = _LABEL_KINDS[type(value)]
            if kind is not first_kind and not (kind == "a string" and _missing_text(value.strip())):  # (missing:
                # an error of its own, below)
                if first_kind is None:
                    first_kind, first_label = kind, (line, value)
                else:
                    raise InputError(
                        f"{name}: line {line}, column {label!r}: the label {_clip(value)} is {kind}, but line "
                        f"{first_label[0]} has {first_kind} ({_clip(first_label[1])}); a column's labels are all "
                        "numbers (compared by value), all strings or all booleans: write them as one kind")
            labels.append(label_text(value))
            values = [_json_number(record[c], "the score", c, line, name) for c, _ in score_columns]
            scores.append(values)
            if weight is not None:
                values = [*values, _json_number(record[weight], "the weight", weight, line, name)]
                weights.append(values[-1])
            total = sum(values)
            if total - total != 0:  # a NaN or an infinity (1e400): its text, for the message
                as_written = _JSON_TEXTS.decode(text)
                keys = [c for c, _ in score_columns] + ([weight] if weight is not None else [])
                for j, (c, v) in enumerate(zip(keys, values)):
                    if not math.isfinite(v):
                        written[(len(labels) - 1, j if j < len(score_columns) else -1)] = str(as_written[c])
            for g, c in zip(groups, by):
                g.append(_json_slice(record[c], c, line, name))
            lines.append(line)
            if len(labels) >= chunk_rows:
                yield flush()
                labels.clear(), scores.clear(), weights.clear(), lines.clear()
                for g in groups:
                    g.clear()
    except UnicodeDecodeError:
        raise InputError(f"{name}: line {line + 1}: not valid UTF-8 text") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{name}: cannot read: {_short(exc)}") from None
    if labels:
        yield flush()


_LABEL_KINDS = {bool: "a boolean", int: "a number", float: "a number", str: "a string"}


def numeric_labels(path: str, label: str) -> bool:
    """Whether the label column of a file holds numbers (not text, not booleans), by its type: a Parquet or
    NumPy column of integers or floats, or JSON Lines whose first label is a JSON number (every label is then a
    number: a column mixing kinds is refused).  Delimited text has no types: its labels are text."""
    try:
        kind = file_format(path)
        if kind == "jsonl":
            value = _first_json_record(path).get(label)
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        if kind == "parquet":
            pa = _pyarrow()
            field = _parquet_file(path)[1].schema_arrow.field(label)
            return bool(pa.types.is_integer(field.type) or pa.types.is_floating(field.type))
        if kind == "numpy":
            data, _ = _load_numpy(path, mmap=True)
            try:
                return bool(np.asarray(data[label]).dtype.kind in "iuf")
            finally:
                if isinstance(data, np.lib.npyio.NpzFile):
                    data.close()
    except Exception:  # the readers have given their message already
        return False
    return False


def is_number_text(text: str) -> bool:
    """Whether ``text`` is a number as the delimited-text parsers read one (:data:`_NUMBER_TEXT`: ASCII
    digits, no ``_`` separators, no full-width or other Unicode digits), which ``float`` alone would not tell."""
    return _NUMBER_TEXT.fullmatch(text) is not None


def number_label(pos_label: str, numbers: bool) -> str:
    """``--pos-label`` as the text of the number it names in a column of numbers (``numbers``:
    :func:`numeric_labels`), before any row is read: ``1.0``, ``1e0`` and ``+1.00`` name the label
    ``1``, as :func:`label_text` writes the numbers of such a column; itself otherwise (a text that
    is no number, a column of text, or an integer past 2**53, which a float would change)."""
    if not numbers or not _NUMBER_TEXT.fullmatch(pos_label):
        return pos_label
    value = float(pos_label)
    if value != value or abs(value) == float("inf") or (value.is_integer() and abs(value) >= 2.0**53):
        return pos_label
    return label_text(value)


def positive_label(pos_label: str, texts: Sequence[str], numbers: bool) -> str:
    """``--pos-label`` as the text of the label it names: itself when a label has that text; else, in a
    column of numbers (``numbers``), the one label equal to it by value (``1.0`` names the label ``1``, as
    ``1 == 1.0`` in the library); else itself (the caller says that it does not occur)."""
    if pos_label in texts or not numbers or not _NUMBER_TEXT.fullmatch(pos_label):
        return pos_label
    value = float(pos_label)
    equal = [t for t in texts if _NUMBER_TEXT.fullmatch(t) and float(t) == value]
    return equal[0] if len(equal) == 1 else pos_label


def _json_slice(value: Any, column: str, line: int, name: str) -> str:
    """A JSON slice value as text: null is missing; strings, numbers and booleans as labels."""
    if isinstance(value, (dict, list)):
        raise InputError(f"{name}: line {line}, column {column!r}: a slice value (--by) must be a string, a "
                         f"number, a boolean or null; got {_clip(value)}")
    try:
        return slice_text(value)
    except ValueError:  # str() of a huge integer
        raise InputError(f"{name}: line {line}, column {column!r}: the slice value is a number of more than "
                         "4300 digits; write it as a string") from None


def _json_number(value: Any, what: str, column: str, line: int, name: str) -> float:
    if isinstance(value, _HugeInt):
        raise InputError(f"{name}: line {line}, column {column!r}: {what} must be finite; got an integer "
                         f"of {len(value.lstrip('-'))} digits, beyond the range of a float")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{name}: line {line}, column {column!r}: {what} must be a number; got {_clip(value)}")
    try:
        number = float(value)
    except OverflowError:
        raise InputError(f"{name}: line {line}, column {column!r}: {what} must be finite; got an integer "
                         f"of {len(str(abs(value)))} digits, beyond the range of a float") from None
    if type(value) is int and not -_EXACT <= value <= _EXACT:  # a JSON integer, not a float: as delimited text
        raise InputError(f"{name}: line {line}, column {column!r}: {beyond_message(what, value, text=True)}")
    return number


# JSON Lines: the contract of both readers (pyarrow's and the ``json`` module's)
# * one JSON object per line (``\n``, ``\r\n`` or ``\r``); blank lines are skipped; a leading BOM is
#   allowed; two objects on one line, or one object over several lines, is an error;
# * UTF-8 only; no comments, no trailing commas (the ``json`` module's grammar, plus its
#   ``NaN`` / ``Infinity`` tokens, which are then a missing label or a non-finite score);
# * a repeated key of a column read is an error (``json`` and pandas keep the last value silently;
#   pyarrow refuses it for the columns of its schema, and the exact reader names the line and key);
# * keys that are not used may hold anything valid, nested at most ``MAX_JSON_DEPTH`` levels
#   (deeper lines are refused: pyarrow's parser overflows its stack on deep nesting, the
#   ``json`` module raises RecursionError near 1000 levels, pandas refuses beyond 1024);
#   integers of any length (the ``json`` module's 4300-digit limit applies only to used keys).


class _HugeInt(str):
    """A JSON integer of more digits than ``int`` converts: kept as its text."""


_INT_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 0)() or 1 << 62


def _json_int(text: str) -> Any:
    return int(text) if len(text) <= _INT_DIGITS else _HugeInt(text)


class _Repeated(dict):  # type: ignore[type-arg]
    """A JSON object in which a key occurs more than once (``repeated``: those keys, in order); the
    ``json`` module would keep the last value silently."""

    repeated: list[str]


def _json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    record = dict(pairs)
    if len(record) != len(pairs):
        record = _Repeated(record)
        seen: set[str] = set()
        record.repeated = list(dict.fromkeys(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return record


_JSON = json.JSONDecoder(object_pairs_hook=_json_object)
_JSON_HUGE = json.JSONDecoder(object_pairs_hook=_json_object, parse_int=_json_int)
_JSON_TEXTS = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=str)  # numbers as written


def _repeated_keys(record: Any, wanted: Sequence[str], line: int, name: str) -> None:
    """Refuse a record in which a column read (``wanted``) occurs more than once."""
    if type(record) is _Repeated:
        for key in record.repeated:
            if key in wanted:
                raise InputError(f"{name}: line {line}, column {key!r}: the key occurs more than once in the object, "
                                 "so its value is ambiguous; write each key once a line")


def _first_json_record(path: str) -> dict[str, Any]:
    """The first record of a JSON Lines file (blank lines skipped), as the exact reader reads it."""
    with _open_text(path, _Progress(path, 0, False)) as stream:
        line = 0
        try:
            for line, text in enumerate(stream, 1):
                record = _json_record(text, line, path)
                if record is not None:
                    return record  # type: ignore[no-any-return]
        except UnicodeDecodeError:
            raise InputError(f"{path}: line {line + 1}: not valid UTF-8 text") from None
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{path}: cannot read: {_short(exc)}") from None
    raise InputError(f"{path}: no data rows")


def _json_record(text: str, line: int, name: str) -> Any:
    """One line of JSON Lines: its object, or None for a blank line; else :class:`InputError`."""
    if not text.strip():
        return None
    try:  # decoded with surrogateescape, so the line of a bad byte is known
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{name}: line {line}: not valid UTF-8 text") from None
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH:  # else the depth is at most that
        depth = _JsonShape()
        depth.scan(text.encode("utf-8"), lines=False)
        if depth.max_depth > MAX_JSON_DEPTH:
            raise InputError(f"{name}: line {line}: not usable JSON: nested too deeply ({depth.max_depth} levels; "
                             f"at most {MAX_JSON_DEPTH}); each line must be an object of columns")
    try:
        try:
            record = _JSON.decode(text)
        except ValueError as exc:  # an integer of more digits than int converts, maybe in an unused key
            if isinstance(exc, json.JSONDecodeError) or "digits" not in str(exc):
                raise
            record = _JSON_HUGE.decode(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{name}: line {line}: not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:  # not reached within MAX_JSON_DEPTH; kept for a deep caller's stack
        raise InputError(f"{name}: line {line}: not usable JSON: nested too deeply; "
                         "each line must be an object of columns") from None
    except ValueError as exc:
        raise InputError(f"{name}: line {line}: not usable JSON: {_short(exc)}") from None
    if not isinstance(record, dict):
        raise InputError(f"{name}: line {line}: each line must be a JSON object; got {type(record).__name__}")
    return record


def _arrow_json_chunks(path: str, meter: _Progress, *, label: str, score_columns: ScoreColumns,
                       weight: str | None, classes: list[str] | None, chunk_rows: int,
                       whole: bool, by: Sequence[str] = ()) -> Iterator[Columns]:
    """pyarrow's JSON reader in blocks of 1 MB, the whole file too (``whole``: the caller joins the chunks;
    a table of the whole file held its label column as strings, 6.1-6.8x the columns at 1e7 rows); anything
    it rejects or any check that fails is left to the exact reader, from the rows not yet given."""
    pa = _pyarrow()
    try:
        import pyarrow.json as pjson
    except ImportError:
        raise _Retry from None
    if not whole and not hasattr(pjson, "open_json"):
        raise _Retry
    numbers = list(dict.fromkeys([c for c, _ in score_columns] + ([weight] if weight else [])))
    if label in numbers or any(c in numbers for c in by):
        raise _Retry
    # Only the needed keys are converted (the others are parsed and dropped: a file whose rows
    # hold many distinct keys took 24 s and 5.7 GB for 20,000 rows when pyarrow built a column
    # for each).  The label's type is the first record's; a row of another type is an error
    # of pyarrow's, so the exact reader takes the file.
    try:
        first = _first_json_record(path)
    except InputError:
        raise _Retry from None
    label_type = {bool: pa.bool_(), int: pa.int64(), float: pa.float64(), str: pa.string()}.get(
        type(first.get(label)))
    if label_type is None:
        raise _Retry
    schema = pa.schema([(label, label_type)] + [(c, pa.float64()) for c in numbers])
    parse = pjson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore", newlines_in_values=False)

    def retry(i: int) -> str:
        raise _Retry

    def columns_of(batch: Any) -> Columns:
        names = batch.schema.names
        if label not in names or any(c not in names for c in numbers):
            raise _Retry
        lab = batch.column(label)
        if isinstance(lab, pa.ChunkedArray):
            lab = lab.combine_chunks()
        kind = lab.type
        if lab.null_count or not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or
                                  pa.types.is_integer(kind) or pa.types.is_boolean(kind) or
                                  pa.types.is_floating(kind)):
            raise _Retry
        enc = pa.compute.dictionary_encode(lab)
        values = enc.dictionary.to_pylist()
        if pa.types.is_floating(kind) and any(abs(v) >= 2.0**53 for v in values if v == v):
            raise _Retry  # an integer label beyond a float's precision
        labels = _encode(values, enc.indices.to_numpy(zero_copy_only=False), label_text)
        arrays = {}
        for c in numbers:
            col = batch.column(c)
            if col.null_count:
                raise _Retry
            arrays[c] = np.asarray(col.to_numpy() if hasattr(col, "to_numpy") else col, dtype=np.float64)
            if len(_beyond_rows(arrays[c])):
                raise _Retry  # maybe an integer beyond 2**53, rounded: the json module tells integers from floats
        scores = np.column_stack([arrays[c] for c, _ in score_columns]) if score_columns else np.empty((len(lab), 0))
        groups = []
        for c in by:
            if c not in names:
                raise _Retry
            col = batch.column(c)
            kind = col.type
            if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_integer(kind) or
                    pa.types.is_boolean(kind) or pa.types.is_null(kind)):
                raise _Retry  # floats (1.0 and 1 are one value as text), nested values: the exact reader
            if col.null_count:
                raise _Retry  # a null or an absent key (an error): the exact reader tells them apart
            groups.append((c, _arrow_slices(pa, col)))
        return _finish(path, labels, scores, None if weight is None else arrays[weight], label=label,
                       score_columns=score_columns, weight=weight, classes=classes, where=retry, whole=False,
                       by=groups)

    # Blocks of whole lines, each checked (:class:`_Scan`) and then parsed from memory: pyarrow's
    # streaming reader of a Python file read ahead in its own threads, and a read still pending when
    # an error ended the reading crashed or hung the interpreter at exit.
    shape = _JsonShape()
    with _Scan(_open_bytes(path, meter), shape) as scan:
        rows = 0
        rest = b""
        try:
            while True:
                data = scan.read(1 << 20)
                block = rest + data
                if data:
                    cut = max(block.rfind(b"\n"), block.rfind(b"\r")) + 1
                    block, rest = block[:cut], block[cut:]
                if block.strip():
                    read = pjson.ReadOptions(use_threads=True, block_size=max(1 << 20, len(block) + 1))
                    table = pjson.read_json(pa.BufferReader(block), read_options=read, parse_options=parse)
                    for batch in table.to_batches():
                        for start in range(0, batch.num_rows, chunk_rows):
                            yield columns_of(batch.slice(start, chunk_rows))
                        rows += batch.num_rows
                if not data:
                    break
            if rows != shape.values:
                raise _Retry
        except (pa.ArrowException, OSError, EOFError, ValueError, TypeError, zlib.error) as exc:
            if isinstance(exc, InputError) and not scan.failed:
                raise
            raise _Retry from None


def _jsonl_file(path: str, meter: _Progress, *, chunk_rows: int, whole: bool, fast: str | None = "auto",
                **kw: Any) -> Iterator[Columns]:
    """JSON Lines: pyarrow's reader while it can, else (from the rows not yet given) the exact one."""
    done = 0
    if fast == "auto" and _pyarrow() is not None:
        try:
            for chunk in _arrow_json_chunks(path, meter, chunk_rows=chunk_rows, whole=whole, **kw):
                yield chunk
                done += len(chunk.labels)
            return
        except _Retry:
            pass
    with _open_text(path, meter) as stream:
        bounded = _field_limit(path) >= sys.maxsize  # a .gz file: its size bounds no line
        yield from _skip(_jsonl_chunks(stream, path, chunk_rows=chunk_rows, bounded=bounded, **kw), done)


# ---------------------------------------------------------------------------
# binary formats: Parquet, .npz, .npy
def _row(i: int) -> str:
    return f"row {i + 1}"


def _numeric(values: Any, column: str, name: str, what: str, first_row: int = 0) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise InputError(f"{name}: column {column!r} must be 1-D; got shape {arr.shape}")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise InputError(f"{name}: column {column!r}: {what} must be numeric; got dtype {arr.dtype}")
    if arr.dtype.kind in "iu" and arr.dtype.itemsize >= 8 and arr.shape[0]:
        # the columns are read as float64: an integer beyond 2**53 would merge with its neighbours
        big = np.flatnonzero((arr > 2**53) | (arr < -(2**53)) if arr.dtype.kind == "i" else arr > 2**53)
        if big.shape[0]:
            at = int(big[0])
            raise InputError(f"{name}: {_row(first_row + at)}, column {column!r}: {beyond_message(what, arr[at])}")
    return arr.astype(_score_dtype(arr.dtype) if what == "the score" else np.float64)


def _score_dtype(dtype: np.dtype) -> type:
    """The dtype a numeric score column is held in: float32 for floats of at most 32 bits (a float32
    column keeps its 4 bytes a row; the order and every number are those of its float64 values),
    else float64."""
    return np.float32 if dtype.kind == "f" and dtype.itemsize <= 4 else np.float64


def _stacked(columns: list[np.ndarray], n: int) -> np.ndarray:
    """The score columns as one (n, k) array: one column as a view of itself (no copy); several in
    one dtype (float64 unless all are float32)."""
    if len(columns) == 1:
        return columns[0][:, None]
    return np.column_stack(columns) if columns else np.empty((n, 0))


def _numpy_labels(raw: np.ndarray, text: Callable[[Any], str] = label_text) -> tuple[list[str], np.ndarray]:
    """Distinct label texts and codes of a NumPy column (``text`` of each distinct value)."""
    if raw.dtype.kind in "biufUS" and len(raw):
        values, codes = np.unique(raw, return_inverse=True)
        return _encode(values.tolist(), codes.reshape(-1), text)
    return _encode_list([text(v) for v in raw.tolist()])


def _from_arrays(
    name: str, get: Callable[[str, str], Any], *, label: str, score_columns: ScoreColumns,
    weight: str | None, classes: list[str] | None, first_row: int = 0, whole: bool = True, by: Sequence[str] = (),
) -> Columns:
    raw_labels = np.asarray(get(label, "--label"))
    if raw_labels.ndim != 1:
        raise InputError(f"{name}: column {label!r} must be 1-D; got shape {raw_labels.shape}")
    labels = _numpy_labels(raw_labels)
    n = len(raw_labels)
    columns = [_numeric(get(c, option), c, name, "the score", first_row) for c, option in score_columns]
    w = None if weight is None else _numeric(get(weight, "--weight"), weight, name, "the weight", first_row)
    for c, arr in [*zip([c for c, _ in score_columns], columns), *([(weight, w)] if w is not None else [])]:
        if arr.shape[0] != n:
            raise InputError(f"{name}: column {c!r} has {arr.shape[0]} rows, column {label!r} has {n}")
    scores = _stacked(columns, n)
    groups = []
    for c in by:
        raw = np.asarray(get(c, "--by"))
        if raw.ndim != 1 or raw.shape[0] != n:
            raise InputError(f"{name}: column {c!r} (given by --by) must be 1-D with {n} rows; got shape {raw.shape}")
        groups.append((c, _numpy_labels(raw, slice_text)))
    return _finish(name, labels, scores, w, label=label, score_columns=score_columns, weight=weight,
                   classes=classes, where=lambda i: _row(first_row + i), whole=whole, by=groups)


_DEFLATE_RATIO = 1032  # the most bytes deflate can give per byte it holds (258 per 2 bits)


def _npy_declared(fh: IO[bytes], holds: int, name: str, what: str, writer: str = "numpy.save") -> None:
    """Check the ``.npy`` header at ``fh`` (a file or an archive member of ``holds`` bytes, header
    included) before anything is allocated: the shape times the item size it declares must fit in
    the bytes that follow the header.  A header numpy cannot read is left to ``numpy.load``."""
    try:
        version = np.lib.format.read_magic(fh)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(fh)
    except (ValueError, OSError, EOFError, SyntaxError, TypeError, zipfile.BadZipFile, zlib.error):
        return
    count = 1
    for n in shape:
        count *= int(n)
    need, left = count * dtype.itemsize, holds - fh.tell()
    if need > left:
        rows = f"{count} rows" if len(shape) == 1 else f"shape {tuple(shape)} ({count} values)"
        raise InputError(f"{name}: {what}declares {rows} of {dtype.itemsize} bytes ({need} bytes) but holds {left} "
                         f"bytes after its header; the file is truncated or corrupt: write it again with {writer}")


def _check_numpy_sizes(path: str) -> None:
    """The declared sizes of a ``.npy`` file, or of every member of a ``.npz`` archive, against the
    bytes there are (a header claiming 10**13 rows in 144 bytes asked numpy for 73 TiB)."""
    try:
        with open(path, "rb") as fh:
            if fh.read(2) != b"PK":
                fh.seek(0)
                _npy_declared(fh, os.fstat(fh.fileno()).st_size, path, "")
                return
            size = os.fstat(fh.fileno()).st_size
            fh.seek(0)
            with zipfile.ZipFile(fh) as archive:
                for info in archive.infolist():
                    member = f"array {info.filename[:-4]!r} " if info.filename.endswith(".npy") else \
                        f"member {info.filename!r} "
                    limit = info.compress_size * (_DEFLATE_RATIO if info.compress_type != zipfile.ZIP_STORED else 1)
                    if info.compress_size > size or info.file_size > limit + 64:
                        raise InputError(f"{path}: {member}declares {info.file_size} bytes, stored in "
                                         f"{info.compress_size} of a {size}-byte archive; the archive is corrupt: "
                                         "write it again with numpy.savez")
                    with archive.open(info) as part:
                        _npy_declared(part, info.file_size, path, member, "numpy.savez")  # type: ignore[arg-type]
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        return  # numpy.load gives the message


def _load_numpy(path: str, mmap: bool = False) -> tuple[Any, list[str]]:
    """``numpy.load`` (no pickles) and the column names: an archive's arrays, a structured
    array's fields; each declared size checked first (:func:`_check_numpy_sizes`)."""
    _check_numpy_sizes(path)
    try:
        data = np.load(path, allow_pickle=False, mmap_mode="r" if mmap else None)
    except MemoryError:
        raise InputError(f"{path}: too large to read into memory ({os.path.getsize(path)} bytes)") from None
    except EOFError:
        raise InputError(f"{path}: not a readable NumPy file: it is empty (0 bytes of data); "
                         "write it with numpy.save / numpy.savez") from None
    except (OSError, ValueError, zipfile.BadZipFile, zlib.error) as exc:
        raise InputError(f"{path}: not a readable NumPy file: {_short(exc)}") from None
    if isinstance(data, np.lib.npyio.NpzFile):
        return data, list(data.files)
    names = list(getattr(data.dtype, "names", None) or ())
    if not names:
        raise InputError(f"{path}: a .npy file must hold a structured array with named fields; got dtype {data.dtype}")
    return data, names


def _read_numpy(path: str, **kw: Any) -> Columns:
    data, names = _load_numpy(path)
    if isinstance(data, np.lib.npyio.NpzFile):

        def get(column: str, option: str) -> Any:
            if column not in names:
                raise InputError(f"{path}: no array {_clip(column)} (given by {option}); the arrays are "
                                 f"{_names(names, 'arrays')}")
            try:
                return data[column]
            except MemoryError:
                raise InputError(f"{path}: array {column!r}: too large to read into memory") from None
            except ValueError as exc:
                if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
                    raise InputError(f"{path}: array {column!r} holds Python objects (dtype object), which "
                                     "precall does not unpickle; save it as strings or numbers") from None
                raise InputError(f"{path}: array {column!r}: not readable: {_short(exc)}") from None
            except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
                raise InputError(f"{path}: array {column!r}: not readable (corrupt archive?): "
                                 f"{_short(exc)}") from None
    else:
        def get(column: str, option: str) -> Any:
            if column not in names:
                raise InputError(f"{path}: no field {_clip(column)} (given by {option}); the fields are "
                                 f"{_names(names, 'fields')}")
            return data[column]
    try:
        return _from_arrays(path, get, **kw)
    finally:
        if isinstance(data, np.lib.npyio.NpzFile):
            data.close()


def _parquet_columns(path: str, pa: Any, get: Callable[[str], Any], columns: list[str], first_row: int, *,
                     label: str, score_columns: ScoreColumns, weight: str | None,
                     classes: list[str] | None, by: Sequence[str] = ()) -> Columns:
    """Checked Columns from whole Arrow columns: numbers by ``to_numpy``, labels and slice values by
    their distinct values (slice values may be null: a missing value)."""
    arrays: dict[str, Any] = {}
    labels: tuple[list[str], np.ndarray] = ([], np.zeros(0, dtype=np.int64))
    groups = []
    for c in by:
        col = get(c)
        kind = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
        if pa.types.is_nested(kind):
            raise InputError(f"{path}: column {c!r} (given by --by): a slice value must be a string, a number or "
                             f"a boolean; got type {col.type}")
        groups.append((c, _arrow_slices(pa, col)))
    for c in columns:
        if c in by and c != label and c != weight and c not in [s for s, _ in score_columns]:
            continue
        col = get(c)
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
        if col.null_count:
            first = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(f"{path}: {_row(first_row + first)}, column {c!r}: a null (missing) value")
        if c == label:
            if isinstance(col.type, (pa.ListType, pa.LargeListType, pa.StructType, pa.MapType)):
                raise InputError(f"{path}: column {label!r}: the label must be a string or a number; "
                                 f"got type {col.type}")
            labels = _dictionary_codes(pa, col, label_text)
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode()
        if c in [s for s, _ in score_columns] or c == weight:
            if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
                raise InputError(f"{path}: column {c!r}: the {'weight' if c == weight else 'score'} must be "
                                 f"numeric; got type {col.type}")
            arrays[c] = col.to_numpy(zero_copy_only=False)
    n = len(labels[1])
    scols = [_numeric(arrays[c], c, path, "the score", first_row) for c, _ in score_columns]
    w = None if weight is None else _numeric(arrays[weight], weight, path, "the weight", first_row)
    scores = _stacked(scols, n)
    return _finish(path, labels, scores, w, label=label, score_columns=score_columns, weight=weight,
                   classes=classes, where=lambda i: _row(first_row + i), whole=False, by=groups)


#: rows per Parquet batch when the whole file is read: each is copied into the whole columns and released
#: (pyarrow decodes a row group's column chunk at a time; larger batches added about 40 MB at the peak)
_PARQUET_BATCH = 1 << 16


def _parquet_file(path: str) -> tuple[Any, Any]:
    """pyarrow and the opened ``pyarrow.parquet.ParquetFile`` (its footer and schema read)."""
    try:
        import pyarrow as pa
        import pyarrow.compute  # noqa: F401
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"{path}: reading Parquet needs pyarrow, the 'parquet' extra: pip install 'precall[parquet]'"
        ) from None
    try:
        # pre_buffer kept every row group's bytes; unbuffered reads take a whole column chunk at once (a row
        # group of 1e7 rows: +66 MB), 4 MB reads bound it at no cost in time
        return pa, pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 22)
    except Exception as exc:  # pyarrow raises its own error types for corrupt files
        raise InputError(f"{path}: not a readable Parquet file: {_short(exc)}") from None


def _parquet_chunks(path: str, progress: _Progress, *, chunk_rows: int, whole: bool, **kw: Any) -> Iterator[Columns]:
    """Batches of ``chunk_rows`` rows (``whole``: of ``_PARQUET_BATCH``, which the caller joins), row numbers
    over the file."""
    pa, pf = _parquet_file(path)
    names = pf.schema_arrow.names
    wanted = [(kw["label"], "--label"), *kw["score_columns"]] + ([(kw["weight"], "--weight")] if kw["weight"] else []) \
        + [(c, "--by") for c in kw["by"]]
    for column, option in wanted:
        if column not in names:
            raise InputError(f"{path}: no column {_clip(column)} (given by {option}); the columns are {_names(names)}")
        if names.count(column) > 1:
            raise InputError(f"{path}: column {_clip(column)} (given by {option}) appears {names.count(column)} "
                             f"times, as fields {_names([i + 1 for i, n in enumerate(names) if n == column], 'fields')}"
                             "; rename the duplicates")
    columns = list(dict.fromkeys(c for c, _ in wanted))

    def locate(exc: Exception, done: int) -> InputError:
        """The row group and column that cannot be decoded."""
        for g in range(pf.num_row_groups):
            start = sum(pf.metadata.row_group(k).num_rows for k in range(g))
            if start + pf.metadata.row_group(g).num_rows <= done:
                continue
            for c in columns:
                try:
                    pf.read_row_group(g, columns=[c])
                except Exception as inner:  # noqa: BLE001 - pyarrow's own error types
                    rows = pf.metadata.row_group(g).num_rows
                    return InputError(f"{path}: rows {start + 1}-{start + rows} (row group {g + 1}), column {c!r}: "
                                      f"cannot decode: {_short(inner)}; the file is corrupt")
        return InputError(f"{path}: cannot decode the data after row {done}: {_short(exc)}; the file is corrupt")

    if whole:  # batches too: the caller copies each into the whole columns and releases it
        chunk_rows = _PARQUET_BATCH
    done = 0
    batches = pf.iter_batches(batch_size=chunk_rows, columns=columns)
    while True:
        try:
            batch = next(batches)
        except StopIteration:
            return
        except Exception as exc:  # noqa: BLE001 - OSError / ArrowInvalid for corrupt pages
            raise locate(exc, done) from None
        yield _parquet_columns(path, pa, batch.column, columns, done, **kw)
        done += batch.num_rows
        progress.update(int(progress.total * done / max(pf.metadata.num_rows, 1)))


def read_arrow(table: Any, name: str, *, label: str, score_columns: ScoreColumns, weight: str | None = None,
               by: Sequence[str] = ()) -> Columns:
    """The :class:`Columns` of an Arrow table already in memory (``pyarrow.Table``, e.g. collected
    from Spark by ``DataFrame.toArrow``), checked and converted as the same columns of a Parquet
    file are (:func:`read_file`); ``name`` stands for the file in messages."""
    import pyarrow as pa  # noqa: PLC0415 - whoever holds an Arrow table has pyarrow

    wanted = [(label, "--label"), *score_columns] + ([(weight, "--weight")] if weight else []) + \
        [(c, "--by") for c in by]
    for column, option in wanted:
        if column not in table.column_names:
            raise InputError(f"{name}: no column {_clip(column)} (given by {option}); the columns are "
                             f"{_names(table.column_names)}")
    columns = list(dict.fromkeys(c for c, _ in wanted))
    part = _parquet_columns(name, pa, table.column, columns, 0, label=label, score_columns=score_columns,
                            weight=weight, classes=None, by=by)
    return _concat(name, iter([part]), weight, "no data rows")


# ---------------------------------------------------------------------------
def _iter(path: str, *, label: str, score_columns: ScoreColumns, weight: str | None, classes: list[str] | None,
          delimiter: str | None, progress: bool | None, chunk_rows: int, whole: bool,
          by: Sequence[str] = ()) -> Iterator[Columns]:
    kind = _format(path)
    size = os.path.getsize(path) if os.path.isfile(path) else 0
    meter = _Progress(path, size, progress)
    kw: dict[str, Any] = {"label": label, "score_columns": score_columns, "weight": weight, "classes": classes,
                          "by": list(by)}
    try:
        if kind == "parquet":
            yield from _parquet_chunks(path, meter, chunk_rows=chunk_rows, whole=whole, **kw)
        elif kind == "numpy":
            yield _read_numpy(path, **kw)
        elif kind == "jsonl":
            yield from _jsonl_file(path, meter, chunk_rows=chunk_rows, whole=whole, **kw)
        else:
            yield from _delimited_file(path, meter, delimiter=delimiter or _delimiter_for(path),
                                       chunk_rows=chunk_rows, whole=whole, **kw)
    finally:
        meter.close()


def file_format(path: str) -> str:
    """The format of a file by its name, as every reader dispatches it: ``"parquet"``
    (``.parquet``, ``.pq``), ``"numpy"`` (``.npz``, ``.npy``), ``"jsonl"`` (``.jsonl``,
    ``.ndjson``) or ``"delimited"`` (anything else), a ``.gz`` suffix set aside.

    Examples
    --------
    >>> file_format("scores.JSONL.gz"), file_format("t.pq"), file_format("t.tsv")
    ('jsonl', 'parquet', 'delimited')
    """
    stem = _stem(path)
    for kind, suffixes in (("parquet", (".parquet", ".pq")), ("numpy", (".npz", ".npy")),
                           ("jsonl", (".jsonl", ".ndjson"))):
        if stem.endswith(suffixes):
            return kind
    return "delimited"


def _format(path: str) -> str:
    """:func:`file_format`, after checking that the file opens (a binary format cannot be gzip'd)."""
    _open_binary(path).close()
    kind = file_format(path)
    if kind in ("parquet", "numpy") and _stem(path) != path.lower():
        raise InputError(f"{path}: a gzip'd {kind} file is not read in place (its format is compressed "
                         "already); decompress it first, e.g. gunzip -k FILE")
    return kind


def column_names(path: str, delimiter: str | None = None) -> list[str]:
    """The column names of a data file, read as :func:`read_file` reads it (the same formats,
    decompression and errors), without reading the rows.

    Delimited text: the header line's fields (stripped); JSON Lines: the keys of the first
    record; Parquet: the schema's names; ``.npz``: the arrays; ``.npy``: the fields.

    Raises
    ------
    InputError
        The file cannot be opened or read, naming the file and the line.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as fh:
    ...     _ = fh.write("y, p_cat,p_dog\\n1,0.2,0.8\\n")
    >>> column_names(path)
    ['y', 'p_cat', 'p_dog']
    """
    kind = _format(path)
    if kind == "parquet":
        return list(_parquet_file(path)[1].schema_arrow.names)
    if kind == "numpy":
        data, names = _load_numpy(path, mmap=True)
        if isinstance(data, np.lib.npyio.NpzFile):
            data.close()
        return names
    if kind == "jsonl":
        return list(_first_json_record(path))
    first, _ = _header_row(path, delimiter or _delimiter_for(path))
    if first is None:
        raise InputError(f"{path}: empty file (no header line, no data rows)")
    return [h.strip() for h in first[1]]


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
    by: Sequence[str] = (),
) -> Iterator[Columns]:
    """:func:`read_file` in chunks of at most ``chunk_rows`` rows (``.npz`` / ``.npy``: one
    chunk), each chunk checked as it is read, so a file larger than memory can be
    streamed: one chunk (and, for text, one parser block of a few MB) is held at a time.
    The checks that need the whole file (some data row; some positive weight) are the
    caller's."""
    return _iter(path, label=label, score_columns=score_columns, weight=weight, classes=classes,
                 delimiter=delimiter, progress=progress, chunk_rows=chunk_rows, whole=False, by=by)


def read_file(
    path: str,
    *,
    label: str,
    score_columns: ScoreColumns,
    weight: str | None = None,
    classes: list[str] | None = None,
    delimiter: str | None = None,
    progress: bool | None = None,
    by: Sequence[str] = (),
) -> Columns:
    """Read the label, score and weight columns of ``path``, the format from its name.

    ``score_columns`` lists ``(column, option that named it)``; ``classes``
    (multi-class: one score column per class) requires every label to be one
    of them.  ``by`` names slice columns (``--by``), read as text like the labels
    into :attr:`Columns.by`; a missing value there (an empty field, null, NaN) is
    not an error but a slice of its own.  ``progress=None`` shows progress for
    large files on a terminal.
    """
    chunks = _iter(path, label=label, score_columns=score_columns, weight=weight, classes=classes,
                   delimiter=delimiter, progress=progress, chunk_rows=_WHOLE_ROWS, whole=True, by=by)
    try:
        return _concat(path, chunks, weight, no_rows_text(path))
    finally:
        _release_memory()


def _release_memory() -> None:
    """Return to the system the memory the parsers freed but their allocators kept (pyarrow's pool,
    and glibc's heap, which keeps freed blocks below its mmap threshold): the evaluation that
    follows allocates through numpy, which cannot reuse pyarrow's pool."""
    pa = sys.modules.get("pyarrow")
    if pa is not None:
        pa.default_memory_pool().release_unused()
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None).malloc_trim(0)
        except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
            pass
