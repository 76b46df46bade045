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
"""

from __future__ import annotations

import math
import re
import unicodedata
from typing import Any, Sequence

import numpy as np

__all__ = ["visible", "needs_showing", "columns", "pad", "clip", "shorten", "fixed", "threshold_texts", "threshold_text", "value_digits", "values_text"]

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
    head = (width - 3 + 1) // 2
    return clip(text, head, mark="") + "..." + clip(text[::-1], width - 3 - head, mark="")[::-1]


# ---------------------------------------------------------------------------
# numbers as text: one rule for every printed value and threshold
def fixed(value: Any, digits: int) -> str:
    """A value with ``digits`` decimals; ``nan`` for NaN or None, and never ``-0.000``:
    a value that rounds to zero prints as zero, whatever its sign.

    Examples
    --------
    >>> fixed(-1e-12, 6), fixed(-0.0, 3), fixed(0.5, 2), fixed(float("nan"), 4), fixed(-0.25, 1)
    ('0.000000', '0.000', '0.50', 'nan', '-0.2')
    """
    if value is None or math.isnan(value):
        return "nan"
    text = f"{value:.{digits}f}"
    if text.startswith("-") and not text.strip("-0."):  # -0.000: the sign of nothing
        return text[1:]
    return text


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
