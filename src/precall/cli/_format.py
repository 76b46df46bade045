"""Text, markdown, CSV and JSON rendering of result tables (internal; computes nothing)."""

from __future__ import annotations

import itertools
import json
import math
import sys
from typing import Any, Callable, Iterable, Iterator, TextIO

import numpy as np

import precall
from precall._core.normal import p_text
from precall._core.text import FIXED_LIMIT, SHORT_NAME, clip, columns, fixed, legend, pad, shortened, visible, wrap
from precall.slices import BLOCK, LazyRows


def _description(method: str) -> str:
    convention = precall.CONVENTIONS.get(method)
    return getattr(convention, "summary", "") if convention is not None else ""


def fmt(value: float, digits: int) -> str:
    """A value with ``digits`` decimals, never ``-0.000`` (:func:`precall._core.text.fixed`)."""
    return fixed(value, digits)


def fmt_interval(ci: Any, digits: int) -> str:
    return f"[{fmt(ci.low, digits)}, {fmt(ci.high, digits)}]"


def interval_dict(ci: Any) -> dict[str, Any]:
    out = {"low": ci.low, "high": ci.high, "method": ci.method, "standard_error": ci.standard_error}
    if isinstance(ci, precall.stats.BootstrapResult):
        out["n_degenerate"] = ci.n_degenerate
    return out


def fmt_count(value: float) -> str:
    """A count: a whole number in full below :data:`~precall._core.text.FIXED_LIMIT`, else 6
    significant digits (``3e+300``: a bounded length)."""
    return f"{value:.0f}" if float(value).is_integer() and abs(value) < FIXED_LIMIT else f"{value:.6g}"


def counted(n: float, unit: str, plural: str | None = None) -> str:
    """``n`` and ``unit`` agreeing in number: ``1 row``, ``2 rows``, ``0 rows`` (``plural``: the
    plural when it is not ``unit + "s"``)."""
    return f"{fmt_count(n)} {unit if n == 1 else (plural or unit + 's')}"



def listed(items: list[str], limit: int | None) -> str:
    """``items`` joined by ``", "``, at most ``limit`` of them (None: every one) and then
    ``... (N more)``: a list of names a line can hold whatever their number."""
    if limit is None or len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", ... ({len(items) - limit} more)"


def fmt_cell(value: Any, digits: int) -> str:
    if isinstance(value, float):
        whole = float(value).is_integer() and 1 <= abs(value) < FIXED_LIMIT
        return fmt_count(value) if whole else fmt(value, digits)
    return str(value)


#: a list longer than this is written one compact element a line by :func:`json_text`
LONG_LIST = 1000


#: the encoder of a long list's entries (one compact entry a line)
_COMPACT = json.JSONEncoder(allow_nan=False, separators=(", ", ": "))


def json_text(value: Any, level: int = 0) -> str:
    """``json.dumps(value, indent=2, allow_nan=False)``, but a list of more than :data:`LONG_LIST`
    entries holds one compact entry a line (json's C encoder for each: ``--json`` of a million
    slices in seconds, not minutes, and a line a slice): :func:`json_chunks` joined."""
    return "".join(json_chunks(value, level))


def json_chunks(value: Any, level: int = 0) -> Iterator[str]:
    """The text of :func:`json_text` in pieces, a long list :data:`precall.slices.BLOCK` entries a
    piece: a :class:`precall.slices.LazyRows` (a list, made a block at a time) is made as it is written."""
    pad, inner = "  " * level, "  " * (level + 1)
    if isinstance(value, dict) and value:
        for n, (k, v) in enumerate(value.items()):
            yield ("{\n" if n == 0 else ",\n") + f"{inner}{json.dumps(str(k))}: "
            yield from json_chunks(v, level + 1)
        yield f"\n{pad}}}"
    elif isinstance(value, (list, tuple, LazyRows)) and len(value):
        if len(value) > LONG_LIST:
            line = ",\n" + inner
            blocks = value.blocks() if isinstance(value, LazyRows) else (
                value[start:start + BLOCK] for start in range(0, len(value), BLOCK))
            for n, block in enumerate(blocks):
                yield ("[\n" + inner if n == 0 else line) + line.join(map(_COMPACT.encode, block))
        else:
            for n, v in enumerate(value):
                yield ("[\n" if n == 0 else ",\n") + inner
                yield from json_chunks(v, level + 1)
        yield f"\n{pad}]"
    else:
        yield json.dumps([] if isinstance(value, LazyRows) else value, allow_nan=False)


def print_chunks(chunks: Iterable[str], file: TextIO | None = None, flush: bool = False) -> None:
    """Write ``chunks`` to ``file`` (default ``sys.stdout``) one after another (never all of the
    text at once), then a line feed: ``print("".join(chunks), file=file, flush=flush)``."""
    out = sys.stdout if file is None else file
    for chunk in chunks:
        out.write(chunk)
    out.write("\n")
    if flush:
        out.flush()


def data_stream() -> TextIO:
    """The stream of machine-readable output (``--csv``): standard output as the command line's guard
    (``main._Shown``) gives it for data, the values as they are in a file or a pipe and shown visibly
    (:func:`precall._core.text.visible`) on a terminal; ``sys.stdout`` itself outside the command line."""
    out = sys.stdout
    data = getattr(type(out), "data_stream", None)
    return data(out) if callable(data) else out


def json_safe(value: Any) -> Any:
    if isinstance(value, float):
        return None if not math.isfinite(value) else value
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, np.generic):
        return json_safe(value.item())
    return value


# ---------------------------------------------------------------------------
# the one renderer: tables as text (80 columns unless wide), markdown or CSV; prose wrapped
WIDTH = 80

#: The CLI's own one-line descriptions where the library's summary would mislead next to
#: the numbers (the trapezoid can land above or below step AP).
_CLI_DESCRIPTIONS = {
    "trapezoid": "trapezoidal area under the PR points (straight lines between them; "
    "can differ from step AP either way)",
}


def describe(method: str) -> str:
    """The one-line description of an AP convention as the CLI prints it."""
    return _CLI_DESCRIPTIONS.get(method) or _description(method)


def fmt_p(p: float) -> str:
    """A p-value: three significant digits, scientific below 0.001, ``< 1e-323`` for a
    p-value below the smallest double (``|z| > 38.6``; the p-values are accurate down to it)."""
    return p_text(p)


def _widths(header: list[str], blocks: Iterable[list[list[str]]]) -> tuple[list[int], int]:
    """Each column's width in terminal columns (:func:`columns`: its widest cell, the header's
    included) over the rows of ``blocks`` (lists of rows), and the widest cell of the last column
    that ends in a character other than a space (-1 if none): its line is as wide as the table,
    ``rstrip`` leaving it whole."""
    n = len(header)
    widths = [columns(h) for h in header]

    def solid(cells: Iterable[str]) -> int:
        return max((columns(c) for c in cells if c and not c[-1].isspace()), default=-1)

    widest = solid(header[-1:])
    for rows in blocks:
        for i, cells in zip(range(n), zip(*rows)):  # column by column
            widths[i] = max(widths[i], *map(columns, cells))
        if n and rows:
            widest = max(widest, solid(row[n - 1] for row in rows))
    return widths, widest


def _aligned(rows: Iterable[list[str]], widths: list[int], left: int, last: int = -1, indent: str = "") -> list[str]:
    """``rows`` as lines of cells padded to ``widths`` after ``indent``: the first ``left`` columns
    (and the column ``last``; -1: none) left-aligned, the others right-aligned."""
    right = [not (i < left or i == last) for i in range(len(widths))]
    return [indent + "  ".join([pad(c, w, r) for c, w, r in zip(cells, widths, right)]).rstrip() for cells in rows]


def render_table(
    header: list[str],
    rows: list[list[str]],
    *,
    style: str = "text",
    width: int = WIDTH,
    wide: bool = False,
    left: int = 1,
    indent: str = "",
    prose_last: bool = False,
    group: int = 1,
) -> list[str]:
    """Render a table of strings: ``text`` (aligned), ``markdown`` or ``csv``.

    Parameters
    ----------
    header, rows : list of list of str
        The cells, already formatted.
    style : {"text", "markdown", "csv"}
    width : int
        Text only: the widest line allowed unless ``wide``.  A wider table is wrapped:
        its columns are split into blocks that fit, each block repeating the first
        ``left`` (key) columns, blocks separated by a blank line.
    wide : bool
        Text only: print the table on one block whatever its width.
    left : int
        How many leading columns are left-aligned keys.
    indent : str
        Text only: prefix of every line (counted in ``width``).
    prose_last : bool
        Text only: the last column is prose (left-aligned).
    group : int
        Text only: the columns after the keys come in groups of this many (a model's value
        and its interval) that a split keeps together.

    Returns
    -------
    list of str
        The lines (CSV: its text split at every line feed, those of quoted fields too; joined by line
        feeds, the text).  Text and markdown: every cell passes through
        :func:`precall._core.text.visible`, so that no control, bidi or format character of a name
        reaches the terminal.  CSV is data: the cells as they are, quoted by the :mod:`csv` module where
        needed (a line feed in a quoted field), as the library's ``to_csv`` writes them; the commands
        write it to :func:`data_stream` (shown visibly on a terminal only).

    See Also
    --------
    render_table_chunks : the same text, its rows given and written a block at a time.
    """
    if style == "csv":  # data: the values as they are; a quoted line feed splits a row's "lines" (join them)
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
        return buffer.getvalue()[:-1].split("\n")
    header = [visible(h) for h in header]
    rows = [[visible(c) for c in row] for row in rows]
    if style == "markdown":
        align = "|" + "".join("---|" if i < left else "---:|" for i in range(len(header)))
        return ["| " + " | ".join(header) + " |", align, *("| " + " | ".join(r) + " |" for r in rows)]
    return [line for lines in _text_lines(header, lambda: [rows], width=width, wide=wide, left=left, indent=indent,
                                          prose_last=prose_last, group=group) for line in lines]


def render_table_chunks(
    header: list[str],
    blocks: Callable[[], Iterable[list[list[str]]]],
    *,
    width: int = WIDTH,
    wide: bool = False,
    left: int = 1,
    indent: str = "",
    prose_last: bool = False,
    group: int = 1,
) -> Iterator[str]:
    """The text of :func:`render_table` in pieces, its rows given a block at a time and never
    held together: ``"\\n".join(render_table(header, rows, ...))`` to the byte, ``rows`` the rows of
    every block.

    Parameters
    ----------
    header : list of str
        The column names.
    blocks : callable
        ``blocks()``: the rows (lists of str, already formatted) a list of rows at a time, made
        anew at each call: once for the columns' widths (only the widths are kept), once more when
        only the lines tell whether the table fits ``width`` (a cell of the last column ending in a
        space), then once per column block: a table split to fit ``width`` prints every row of a
        column block before the next column block starts.
    width, wide, left, indent, prose_last, group
        As :func:`render_table`.

    Yields
    ------
    str
        The lines of a block of rows joined by line feeds, each piece after the first starting with a
        line feed (:func:`print_chunks` writes them).  Every cell passes through
        :func:`precall._core.text.visible`, as in :func:`render_table`.

    Examples
    --------
    >>> rows = [["a", "1"], ["b", "22"], ["c", "333"]]
    >>> "".join(render_table_chunks(["key", "n"], lambda: [rows[:2], rows[2:]])) == "\\n".join(
    ...     render_table(["key", "n"], rows))
    True
    """
    header = [visible(h) for h in header]

    def shown() -> Iterator[list[list[str]]]:
        for rows in blocks():
            # visible() replaces characters one at a time: a block with none to replace is left as it is
            text = "".join([c for row in rows for c in row])
            yield rows if visible(text) == text else [[visible(c) for c in row] for row in rows]

    for n, lines in enumerate(_text_lines(header, shown, width=width, wide=wide, left=left, indent=indent,
                                          prose_last=prose_last, group=group)):
        yield ("\n" if n else "") + "\n".join(lines)


def _text_lines(header: list[str], blocks: Callable[[], Iterable[list[list[str]]]], *, width: int, wide: bool,
                left: int, indent: str, prose_last: bool, group: int) -> Iterator[list[str]]:
    """The lines of :func:`render_table`'s text, a non-empty list at a time: a block of rows'
    (``blocks()`` as :func:`render_table_chunks` takes it, the cells already :func:`visible`), the
    header's line with the first, a blank line before each column block after the first."""
    n = len(header)
    widths, widest = _widths(header, blocks())
    last = n - 1 if prose_last else -1
    table = columns(indent) + sum(widths) + 2 * max(n - 1, 0)  # every line's columns before rstrip

    def fits() -> bool:
        if wide or table <= width:
            return True
        if n and widest == widths[-1]:  # a line of the table's full width
            return False
        return all(columns(line) <= width for rows in itertools.chain([[header]], blocks())
                   for line in _aligned(rows, widths, left, last, indent))

    if fits():
        first = [header]
        for rows in blocks():
            if lines := _aligned([*first, *rows], widths, left, last, indent):
                yield lines
                first = []
        if first:  # no rows
            yield _aligned(first, widths, left, last, indent)
        return
    keys = list(range(min(left, n)))
    base = len(indent) + sum(widths[i] + 2 for i in keys)
    column_blocks: list[list[int]] = []
    current: list[int] = []
    used = base
    for start in range(len(keys), n, group):
        members = list(range(start, min(start + group, n)))
        need = sum(widths[i] + 2 for i in members)
        if current and used + need - 2 > width:
            column_blocks.append(current)
            current, used = [], base
        current += members
        used += need
    column_blocks.append(current)
    for b, block in enumerate(column_blocks):  # every row of a column block, then the next column block
        cols = keys + block
        sub = [widths[i] for i in cols]
        sub_last = len(cols) - 1 if prose_last and block[-1] == n - 1 else -1
        head = [*([""] if b else []), *_aligned([[header[i] for i in cols]], sub, left, sub_last, indent)]
        for rows in blocks():
            if rows:
                yield [*head, *_aligned([[r[i] for i in cols] for r in rows], sub, left, sub_last, indent)]
                head = []
        if head:
            yield head


def fit(lines: list[str], *, width: int = WIDTH, wide: bool = False) -> list[str]:
    """Every line wrapped to ``width`` unless ``wide`` (tables are split by :func:`render_table`)."""
    if wide:
        return list(lines)
    return [part for line in lines for part in wrap(line, width=width)]


def short_names(names: list[str], limit: int) -> tuple[list[str], list[tuple[str, str]]]:
    """``names`` as column headers within ``limit`` terminal columns: when one is longer, every name
    longer than :data:`SHORT_NAME` (or ``limit``) keeps its start and end around ``...``, never two alike
    (:func:`~precall._core.text.shortened`), and the legend items (short, full name) of the names
    shortened; the names as they are when all fit."""
    if all(columns(visible(n)) <= max(limit, 9) for n in names):
        return list(names), []
    limit = max(min(limit, SHORT_NAME), 9)

    texts = [visible(n) for n in names]  # in terminal columns (a CJK character takes two), as shown
    shown = shortened(texts, limit)  # never two alike: the cut moves to where they differ, else numbered
    shown = [n if s == t else s for n, s, t in zip(names, shown, texts)]
    return shown, [(s, repr(n)) for s, n in zip(shown, names) if s != n]
