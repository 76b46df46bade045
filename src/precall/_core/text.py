"""User strings made safe to show: the one function every output of precall uses
for a name it did not write (file, column, class and label names, titles, messages).

:func:`visible` replaces every character that can act on a terminal or reorder,
hide or break the text around it, visibly:

* C0 controls (ESC starts terminal escape sequences; ``\\r``, ``\\b`` overwrite;
  tab and newline break a name across cells or lines) and DEL become their
  Unicode Control Pictures (U+2400 + code: ``\\x1b`` -> ``␛``, ``\\n`` -> ``␊``,
  DEL -> ``␡``);
* C1 controls (U+0080-U+009F: U+009B is a one-character CSI on some terminals),
  the bidirectional formatting characters (U+202A-U+202E, U+2066-U+2069,
  U+200E/F, U+061C: Trojan Source, CVE-2021-42574), the other format characters
  (zero-width spaces and joiners, U+2060-U+206F, the BOM, the tag characters
  U+E0000-U+E007F that hide text, ...), the line and paragraph separators
  U+2028/U+2029 and lone surrogates (undecodable bytes) become ``[U+XXXX]``.

That is every character of the Unicode categories Cc, Cf, Zl, Zp and Cs
(Unicode 14); ``tests/test_cli_hostile.py`` checks the set against the running
interpreter's ``unicodedata``.  Everything else, including non-Latin scripts
and emoji, is left as it is.

Pictures draw with matplotlib's default font, DejaVu Sans, which has no Control
Pictures: :func:`drawable` writes them as Python's escapes (``␛`` -> ``\\x1b``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any, Sequence

import numpy as np

__all__ = ["visible", "drawable", "needs_showing", "columns", "pad", "clip", "shorten", "FIXED_LIMIT", "fixed",
           "signed", "percent", "threshold_texts",
           "threshold_text", "value_digits", "values_text", "wrap", "legend", "name_limit", "shortened",
           "table_lines", "SHORT_NAME", "MIN_NAME"]

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


_UNSAFE_IN_LINES = re.compile(_UNSAFE.pattern.replace("[\x00-\x1f", "[\x00-\x08\x0b-\x1f", 1))
""":data:`_UNSAFE` but for the line feeds and tabs of multi-line text."""


def needs_showing(text: str) -> bool:
    """Whether :func:`visible` would change a part of ``text`` between its line feeds and tabs
    (a carriage return, an escape, a bidi control, ...)."""
    return _UNSAFE_IN_LINES.search(text) is not None


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"[U+{code:04X}]"


def visible(value: Any) -> str:
    """``str(value)`` with every control, format and bidi character shown visibly.

    Examples
    --------
    >>> visible("a\\x1b[2Jb")
    'a␛[2Jb'
    >>> visible("invoice\\u202etxt.exe"), visible("tab\\there")
    ('invoice[U+202E]txt.exe', 'tab␉here')
    """
    return _UNSAFE.sub(_show, str(value))


_PICTURES = re.compile("[\u2400-\u241f\u2421]")
"""The Control Pictures :func:`visible` writes for C0 controls and DEL."""


def drawable(value: Any) -> str:
    """:func:`visible` text as a picture's font can draw it: the Control Pictures of C0 controls and
    DEL (``␛`` for ESC), which DejaVu Sans (matplotlib's default font) lacks, as Python's escapes
    (``\\x1b``) rather than a missing glyph (and a warning from matplotlib for each).  It takes
    text that :func:`visible` has shown already, so a Control Picture given as such is written so too.

    Examples
    --------
    >>> drawable("m\\x1b[31m"), drawable(visible("a\\tb\\x7f"))
    ('m\\\\x1b[31m', 'a\\\\x09b\\\\x7f')
    """
    return _PICTURES.sub(lambda m: f"\\x{0x7f if m.group() == chr(0x2421) else ord(m.group()) - 0x2400:02x}",
                         visible(value))


def columns(text: str) -> int:
    """The terminal columns ``text`` takes: 2 for a wide or full-width character (CJK), 0 for a
    combining mark, else 1.

    Examples
    --------
    >>> columns("abc"), columns("\u65e5\u672c"), columns("e\u0301")
    (3, 4, 1)
    """
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
               for ch in text)


def pad(text: str, width: int, right: bool = False) -> str:
    """``text`` padded with spaces to ``width`` terminal columns (:func:`columns`), on the left when
    ``right`` (right-aligned)."""
    fill = " " * max(width - columns(text), 0)
    return fill + text if right else text + fill


def clip(text: str, width: int, mark: str = "~") -> str:
    """``text`` cut to at most ``width`` terminal columns, ``mark`` ending a cut one."""
    if columns(text) <= width:
        return text
    out, used = [], columns(mark)
    for ch in text:
        used += columns(ch)
        if used > width:
            break
        out.append(ch)
    return "".join(out) + mark


def shorten(text: str, width: int) -> str:
    """``text`` within ``width`` terminal columns (:func:`columns`), its start and end kept around
    ``...`` when it is longer: the one rule for a long name in a table header and a picture's legend.

    Parameters
    ----------
    text : str
        The text as it is shown (already :func:`visible`).
    width : int
        The most terminal columns, at least 5 (a character either side of ``...``).

    Returns
    -------
    str
        ``text`` itself when it fits, else its first and last characters around ``...``, the start
        taking the odd column.

    Examples
    --------
    >>> shorten("short", 9), shorten("abcdefghijklmnopqrstuvwxyz", 9)
    ('short', 'abc...xyz')
    """
    if columns(text) <= width:
        return text
    return _cut(text, width, (width - len(_MIDDLE) + 1) // 2)  # the start takes the odd column


# ---------------------------------------------------------------------------
# numbers as text: one rule for every printed value and threshold
#: From this magnitude on :func:`fixed` prints in scientific notation: past 2**53 a double holds no
#: fraction, and AUPRG at a prevalence of 1e-300 is about -1e299 (300 digits in fixed notation)
FIXED_LIMIT = 1e16


def fixed(value: Any, digits: int) -> str:
    """A value with ``digits`` decimals; ``nan`` for NaN or None, and never ``-0.000``:
    a value that rounds to zero prints as zero, whatever its sign.  From :data:`FIXED_LIMIT`
    on, ``digits`` decimals of scientific notation (a bounded length at any magnitude).

    Examples
    --------
    >>> fixed(-1e-12, 6), fixed(-0.0, 3), fixed(0.5, 2), fixed(float("nan"), 4), fixed(-0.25, 1)
    ('0.000000', '0.000', '0.50', 'nan', '-0.2')
    >>> fixed(-1.6666666666666666e299, 6), fixed(123456.5, 2), fixed(float("-inf"), 3)
    ('-1.666667e+299', '123456.50', '-inf')
    """
    if value is None or math.isnan(value):
        return "nan"
    if FIXED_LIMIT <= abs(value) < math.inf:
        return f"{value:.{digits}e}"
    text = f"{value:.{digits}f}"
    if text.startswith("-") and not text.strip("-0."):  # -0.000: the sign of nothing
        return text[1:]
    return text


def signed(value: Any, digits: int) -> str:
    """A difference with ``digits`` decimals and its sign, by :func:`fixed`'s rule: ``nan`` for NaN or
    None (never ``+nan``), and a value that rounds to zero ``+0.000`` whatever its sign.

    Examples
    --------
    >>> signed(0.0125, 4), signed(-0.003, 4), signed(-1e-12, 3), signed(float("nan"), 4)
    ('+0.0125', '-0.0030', '+0.000', 'nan')
    """
    text = fixed(value, digits)
    return text if text == "nan" or text.startswith("-") else "+" + text


def percent(value: float) -> str:
    """A fraction (a confidence level) as a percentage with the digits it has: never rounded
    to a whole percent (0.999 is not ``100%``), float noise (``100 * 0.07`` is
    7.000000000000001) left out at 12 significant digits.

    Examples
    --------
    >>> percent(0.95), percent(0.975), percent(0.999), percent(0.9999), percent(0.07)
    ('95%', '97.5%', '99.9%', '99.99%', '7%')
    """
    return f"{100 * float(value):.12g}%"


_MAX_DIGITS = 17  # every double round-trips at 17 significant digits


def _general(value: float, k: int) -> str:
    text = f"{value:.{k}g}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _pair_digits(a: float, b: float, digits: int) -> int:
    """The fewest significant digits (at least ``digits``) from which on ``a`` and ``b``
    print differently at every precision (equal values: ``digits``)."""
    if a == b or math.isnan(a) or math.isnan(b):
        return digits
    for k in range(_MAX_DIGITS, digits - 1, -1):
        if _general(a, k) == _general(b, k):
            return k + 1
    return digits


def threshold_text(value: float, neighbours: Sequence[float] | None, digits: int) -> str:
    """A threshold (score) with ``digits`` significant digits, more where a neighbouring
    distinct score would print the same: the text of a threshold names it alone.

    ``neighbours``: the distinct scores next to it (below and above); None when they are
    unknown, then the fewest digits (at least ``digits``) that read back as ``value``.

    Examples
    --------
    >>> threshold_text(0.9999991, [0.9999992, 0.5], 4), threshold_text(0.5, [0.25], 4)
    ('0.9999991', '0.5')
    >>> threshold_text(0.1 + 0.2, None, 6)
    '0.30000000000000004'
    """
    value = float(value)
    if neighbours is None:
        if math.isnan(value) or math.isinf(value):
            return _general(value, digits)
        k = next(k for k in range(digits, _MAX_DIGITS + 1) if float(_general(value, k)) == value)
        return _general(value, k)
    k = max([digits, *(_pair_digits(value, float(b), digits) for b in neighbours)])
    return _general(value, k)


def threshold_texts(thresholds: Any, digits: int, indices: Any = None) -> list[str]:
    """The texts of sorted thresholds (a rank table's column, decreasing or increasing),
    or of those at ``indices``: each with ``digits`` significant digits, more where an
    adjacent distinct threshold would print the same (so no two distinct thresholds of the
    column print alike, shown rows or not, and equal ones print alike).

    Examples
    --------
    >>> threshold_texts([1.0, 0.9999999, 0.99999989, 0.99999989, 0.5], 6)
    ['1', '0.9999999', '0.99999989', '0.99999989', '0.5']
    """
    t = np.asarray(thresholds, dtype=float).ravel()
    if t.size == 0:
        return []
    starts = np.r_[True, t[1:] != t[:-1]]  # runs of equal thresholds (ties="stable") print alike
    run = np.cumsum(starts) - 1
    distinct = t[starts]
    chosen = range(t.size) if indices is None else indices
    out = []
    for i in chosen:
        r = int(run[int(i)])
        near = [float(distinct[j]) for j in (r - 1, r + 1) if 0 <= j < distinct.size]
        out.append(threshold_text(float(t[int(i)]), near, digits))
    return out


_NOISE = 1e-9


def value_digits(values: Sequence[float], digits: int = 3, max_digits: int = 6) -> int:
    """The decimals with which a group of values in [0, 1] shown together (an estimate and
    its interval) tell apart what differs: at least ``digits``, more (up to ``max_digits``)
    while two distinct values print alike or a value other than 0 or 1 prints as ``0.000``
    or ``1.000`` (0.9996 is not 1; within 1e-9 of 0 or 1 is float rounding, not a difference).

    Examples
    --------
    >>> value_digits([0.9996, 0.9991, 1.0]), value_digits([0.8, 0.75, 0.85]), value_digits([0.12345, 0.12346])
    (4, 3, 5)
    """
    shown = [float(v) for v in values if v is not None and math.isfinite(v)]
    for d in range(digits, max_digits):
        texts = {v: f"{v:.{d}f}" for v in shown}
        ends = {f"{0:.{d}f}", f"{1:.{d}f}"}
        clash = len(set(texts.values())) < len(texts) or any(
            t in ends and min(abs(v), abs(1 - v)) > _NOISE for v, t in texts.items())
        if not clash:
            return d
    return max_digits


def values_text(values: Sequence[float], digits: int = 3, max_digits: int = 6) -> list[str]:
    """``values`` as text with :func:`value_digits` decimals (:func:`fixed`: no ``-0``)."""
    d = value_digits(values, digits, max_digits)
    return [fixed(v, d) for v in values]


# ---------------------------------------------------------------------------
# prose and legends within a width of terminal columns
def wrap(line: str, *, width: int = 80, hang: int | None = None) -> list[str]:
    """One line of prose as lines of at most ``width`` terminal columns (:func:`columns`: a CJK
    character takes two).

    The continuation lines are indented by ``hang`` (default: the line's own
    indent, plus the width of a leading ``key    `` label of the report header
    when the line has one, so wrapped values line up).
    """
    import re
    import textwrap

    if columns(line) <= width:
        return [line]
    if hang is None:
        m = re.match(r"^( *)(\S+ {2,})?", line)
        hang = columns(m.group(0)) if m else 0
        if hang >= width // 2:
            hang = len(line) - len(line.lstrip(" ")) + 2
    if any(columns(word) > width - hang for word in line.split()):  # a long path: cut it hard
        out = [clip(line, width, mark="")]
        rest = line[len(out[0]):]
        while rest:
            piece = clip(rest, width - hang, mark="") or rest[0]  # at least one character a line
            out.append(" " * hang + piece)
            rest = rest[len(piece):]
        return out
    if line.isascii():
        return textwrap.wrap(line, width=width, subsequent_indent=" " * hang,
                             break_on_hyphens=False) or [line]
    return _wrap_columns(line, width, hang)


def _wrap_columns(line: str, width: int, hang: int) -> list[str]:
    """:func:`wrap` of a line with wide characters: words (no word wider than a line) greedily, in
    terminal columns; the spaces inside a line kept, those at a break dropped."""
    import re

    out: list[str] = []
    current, used = "", 0
    for token in re.findall(r"\S+| +", line):
        size = columns(token)
        if token.startswith(" "):
            current, used = current + token, used + size
            continue
        if current.strip() and used + size > width:
            out.append(current.rstrip())
            current, used = " " * hang, hang
        current, used = current + token, used + size
    if current.strip():
        out.append(current.rstrip())
    return out or [line]


def legend(items: list[tuple[str, str]], *, indent: str = "  ", width: int = 80,
           wide: bool = False) -> list[str]:
    """``name  description`` lines below a table, descriptions aligned and wrapped."""
    if not items:
        return []
    w = max(columns(k) for k, _ in items)  # in terminal columns: a CJK name takes two a character
    lines = [f"{indent}{pad(k, w)}  {d}" for k, d in items]
    if wide:
        return lines
    return [part for line in lines for part in wrap(line, width=width, hang=columns(indent) + w + 2)]


# ---------------------------------------------------------------------------
# tables of names (slices): long names shortened in the middle, distinct, the table within a width
SHORT_NAME = 24
"""A name shortened in a table whose columns are split into blocks keeps this many terminal columns,
``...`` included (the command line's column headers likewise)."""

MIN_NAME = 16
"""The fewest terminal columns a shortened name keeps beside the other columns of one line: with less
room the table is split into blocks of columns and the names keep :data:`SHORT_NAME`."""

_MIDDLE = "..."


def name_limit(longest: int, rest: int, width: int | None) -> int | None:
    """The most terminal columns the names of a table's first column may take: None (whole) when the
    ``longest`` fits beside the ``rest`` of a line (the other columns and their separators) within
    ``width`` (None: no limit); else the room beside the rest if it is at least :data:`MIN_NAME`, else
    :data:`SHORT_NAME` (the table then split into blocks of columns).

    Examples
    --------
    >>> name_limit(30, 40, 80), name_limit(50, 60, 80), name_limit(50, 70, 80), name_limit(500, 70, None)
    (None, 20, 24, None)
    """
    if width is None or longest + rest <= width:
        return None
    room = width - rest
    return room if room >= MIN_NAME else SHORT_NAME


def _cut(text: str, limit: int, head: int) -> str:
    """``text``'s first ``head`` and last ``limit - 3 - head`` terminal columns around ``...``."""
    tail = limit - len(_MIDDLE) - head
    if text.isascii():
        return text[:head] + _MIDDLE + text[len(text) - tail:]
    end = clip(text[::-1], tail, mark="")[::-1]
    start = len(end) - len(end.lstrip("".join(ch for ch in end if unicodedata.combining(ch))))
    return clip(text, head, mark="") + _MIDDLE + end[start:]  # the end starts at a base character, never a mark


def shortened(texts: Sequence[str], limit: int | None, taken: Sequence[str] = ()) -> list[str]:
    """``texts`` (names as shown: :func:`visible` already) within ``limit`` terminal columns (at least 9;
    None: as they are): a longer one keeps its start and end around ``...``, and no two distinct texts
    print alike, nor one shortened like a text of ``taken`` (a table's ``overall`` row).

    A shortened text keeps about as many columns of its start as of its end; where two would print
    alike, the group of those that would moves its cut (more of the start, or of the end) to where
    they differ, and if no one cut tells them apart each keeps its start and a number
    (``start...#2``; the full names are in a legend).

    Examples
    --------
    >>> shortened(["customer_segment_enterprise_region_north", "customer_segment_enterprise_region_south",
    ...            "short"], 20)
    ['customer_...on_north', 'customer_...on_south', 'short']
    >>> shortened(["a" * 10 + "X" + "b" * 20, "a" * 10 + "Y" + "b" * 20], 20)
    ['aaaaaaaaaaX...bbbbbb', 'aaaaaaaaaaY...bbbbbb']
    >>> shortened(["a" * 20 + "X" + "b" * 20, "a" * 20 + "Y" + "b" * 20], 20)
    ['aaaaaaaaaaaaaaa...#1', 'aaaaaaaaaaaaaaa...#2']
    """
    out = list(texts)
    if limit is None:
        return out
    limit = max(int(limit), 9)  # room for a start, ``...`` and an end (or a number)
    long = [i for i, t in enumerate(texts) if columns(t) > limit]
    if not long:
        return out
    balanced = (limit - len(_MIDDLE) + 1) // 2
    for i in long:
        out[i] = _cut(texts[i], limit, balanced)
    first: dict[str, str] = {}  # each shown text: the first text shown so
    clash: set[str] = set()
    for text, shown in zip(texts, out):
        if first.setdefault(shown, text) != text:
            clash.add(shown)
    clash.update(t for t in taken if t in first)
    if not clash:
        return out
    groups: dict[str, list[int]] = {}
    for i in long:
        if out[i] in clash:
            groups.setdefault(out[i], []).append(i)
    whole = {texts[i] for i in range(len(texts)) if out[i] == texts[i]}  # the texts shown as they are
    occupied = set(first) | set(taken)
    heads = sorted(range(1, limit - len(_MIDDLE)), key=lambda h: (abs(h - balanced), -h))
    for shown, members in groups.items():
        if shown not in whole and shown not in taken:
            occupied.discard(shown)  # the group's own text: free again unless a whole text or a taken one
        names = list(dict.fromkeys(texts[i] for i in members))
        for head in heads:
            cut = {name: _cut(name, limit, head) for name in names}
            new = set(cut.values())
            if len(new) == len(names) and not new & occupied:
                break
        else:  # no cut tells them apart: each its start and a number
            cut, k = {}, 0
            for name in names:
                while True:
                    k += 1
                    tag = f"#{k}"
                    text = clip(name, limit - len(_MIDDLE) - len(tag), mark="") + _MIDDLE + tag
                    if text not in occupied:
                        break
                cut[name] = text
                occupied.add(text)
        for i in members:
            out[i] = cut[texts[i]]
        occupied.update(cut.values())
    return out


def table_lines(header: Sequence[str], rows: Sequence[Any], *, width: int | None = 80, keys: int = 1,
                groups: Sequence[Sequence[int]] | None = None, gap: int = 2, left: int | None = None) -> list[str]:
    """A table of text cells (shown as they are: :func:`visible` already) as lines within ``width``
    terminal columns (None: one block whatever its width).

    The first ``left`` columns (default ``keys``) are left-aligned, the others right-aligned, ``gap``
    spaces apart (two after the first column and after the keys).  A row that is a ``str`` is a line
    of its own (a count of rows not shown).  A table wider than ``width`` is split into blocks of
    columns, each repeating the keys and the lines of its own, a blank line between blocks;
    ``groups`` (lists of column indices after the keys, in order) are kept together in a block
    (default: each column alone; a group too wide for a block of its own: its columns apart).

    Examples
    --------
    >>> print("\\n".join(table_lines(["slice", "n", "AP"], [["a", "10", "0.5000"], "... (3 more)"])))
    slice   n      AP
    a      10  0.5000
    ... (3 more)
    >>> table_lines(["slice", "AP", "ROC-AUC"], [["a", "0.5000", "0.7000"]], width=16)
    ['slice      AP', 'a      0.5000', '', 'slice  ROC-AUC', 'a       0.7000']
    """
    n = len(header)
    aligned = keys if left is None else left
    widths = [columns(h) for h in header]
    for row in rows:
        if not isinstance(row, str):
            widths = [max(w, columns(c)) for w, c in zip(widths, row)]

    def size(cols: list[int]) -> int:  # a line of these columns, separators included
        return sum(widths[j] for j in cols) + sum(2 if p in (1, keys) else gap for p in range(1, len(cols)))

    def line(cells: Sequence[str], cols: list[int]) -> str:
        parts = [(" " * (2 if p in (1, keys) else gap) if p else "") + pad(cells[j], widths[j], right=j >= aligned)
                 for p, j in enumerate(cols)]
        return "".join(parts).rstrip()

    every = list(range(n))
    blocks = [every[keys:]]
    if width is not None and size(every) > width and n > keys + 1:
        blocks, current = [], []
        parts = [list(g) for g in (groups or [[j] for j in every[keys:]])]
        parts = [[j] for g in parts for j in g] if any(size(every[:keys] + g) > width for g in parts) else parts
        for group in parts:  # a group too wide for a line of its own: its columns apart
            if current and size(every[:keys] + current + list(group)) > width:
                blocks.append(current)
                current = []
            current = current + list(group)
        blocks.append(current)
    out: list[str] = []
    for b, block in enumerate(blocks):
        cols = every[:keys] + block
        out += [""] if b else []
        out += [line(header, cols), *(row if isinstance(row, str) else line(row, cols) for row in rows)]
    return out
