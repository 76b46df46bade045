"""The structure of JSON text from its bytes, before a parser sees them: the nesting depth.

Python's ``json`` module recurses once per level (``RecursionError`` near 1000 levels,
whatever the stack left to the caller) and pyarrow's parser overflows the C stack on
deep nesting, so every reader of JSON checks the depth first, by vectorised passes over
the bytes (no Python loop per byte).  :class:`JsonShape` is the check of the JSON Lines
reader (:mod:`precall.readers`) and of the detection loaders (:mod:`precall.detection.io`);
:func:`json_depth` is its use on a whole document.
"""

from __future__ import annotations

import reprlib
from typing import Any

import numpy as np

__all__ = ["MAX_JSON_DEPTH", "JsonShape", "json_depth", "show"]

MAX_JSON_DEPTH = 512
"""The deepest nesting of arrays and objects any JSON input may have (pandas refuses beyond 1024)."""

_OPEN_BYTE, _CLOSE_BYTE, _QUOTE_BYTE, _BACKSLASH_BYTE, _BREAK_BYTE = 1, 2, 3, 4, 5
_JSON_BYTES = np.zeros(256, dtype=np.uint8)  # the structural bytes of JSON (UTF-8: all below 0x80)
_JSON_BYTES[[ord("["), ord("{")]] = _OPEN_BYTE
_JSON_BYTES[[ord("]"), ord("}")]] = _CLOSE_BYTE
_JSON_BYTES[ord('"')] = _QUOTE_BYTE
_JSON_BYTES[ord("\\")] = _BACKSLASH_BYTE
_JSON_BYTES[[ord("\n"), ord("\r")]] = _BREAK_BYTE
_JSON_TABLE = bytes(_JSON_BYTES.tolist())  # for bytes.translate
_JSON_STEP = np.array([0, 1, -1, 0, 0, 0], dtype=np.int32)  # the change of depth at each kind of byte


class JsonShape:
    """The structure of JSON text read in blocks, by vectorised passes over the bytes (no
    Python loop per byte or line): the nesting depth outside strings (escaped quotes
    counted), how many top-level values ended, and whether the text keeps one value per
    line.  ``ok`` turns False for anything pyarrow's JSON reader must not be given: nesting
    deeper than ``MAX_JSON_DEPTH`` (its parser recurses on the C stack), a line break
    inside a value or two values on one line (it would read them; the contract refuses
    them), a closing bracket without an opening one."""

    def __init__(self) -> None:
        self.depth = 0  # at the end of the bytes seen
        self.in_string = False
        self.backslashes = 0  # the run of backslashes ending the bytes seen
        self.value_on_line = False  # a top-level value ended on the current line
        self.values = 0
        self.max_depth = 0
        self.ok = True

    def scan(self, data: bytes, lines: bool = True) -> bool:
        """Take the next block of bytes into account; False once the text is not fit."""
        if not data or not self.ok:
            return self.ok
        kind = np.frombuffer(data.translate(_JSON_TABLE), dtype=np.uint8)  # one pass over the bytes, then
        at = np.flatnonzero(kind)                                            # the structural ones alone
        kind = kind[at]
        if self.backslashes or b"\\" in data:
            self._drop_escaped_quotes(at, kind)
        quote = kind == _QUOTE_BYTE
        n_quotes = int(np.count_nonzero(quote))
        if n_quotes:  # keep the brackets and line breaks outside strings (an even number of quotes
            parity = np.cumsum(quote, dtype=np.uint8)  # before; a uint8 running count keeps the parity)
            outside = (parity & 1) == self.in_string
            if lines and (kind[~outside] == _BREAK_BYTE).any():
                self.ok = False  # a line break inside a string: not JSON, and not one value per line
            kind = kind[outside & ~quote]
        else:
            kind = kind if not self.in_string else kind[:0]
        step = _JSON_STEP[kind]
        depth = np.cumsum(step, dtype=np.int32)  # after each bracket or line break
        depth += self.depth
        if len(depth):
            self.max_depth = max(self.max_depth, int(depth.max()))
            if depth.min() < 0 or self.max_depth > MAX_JSON_DEPTH:
                self.ok = False
        if lines and self.ok:
            breaks = kind == _BREAK_BYTE
            ends = (step < 0) & (depth == 0)
            line = np.cumsum(breaks, dtype=np.int32)[ends]  # the line breaks before each top-level end
            if (breaks & (depth > 0)).any() or (len(line) and (
                    (np.diff(line) == 0).any() or (line[0] == 0 and self.value_on_line))):
                self.ok = False
            self.values += len(line)
            n_breaks = int(np.count_nonzero(breaks))
            if len(line):
                self.value_on_line = bool(line[-1] == n_breaks)
            elif n_breaks:
                self.value_on_line = False
        if len(depth):
            self.depth = int(depth[-1])
        self.in_string = bool((n_quotes + self.in_string) % 2)
        tail = len(data) - len(data.rstrip(b"\\"))
        self.backslashes = tail + self.backslashes if tail == len(data) else tail
        return self.ok

    def _drop_escaped_quotes(self, at: np.ndarray, kind: np.ndarray) -> None:
        """Mark the quotes preceded by an odd run of backslashes as ordinary bytes."""
        slashes = at[kind == _BACKSLASH_BYTE]
        iq = np.flatnonzero(kind == _QUOTE_BYTE)
        quotes = at[iq]
        run = np.zeros(len(quotes), dtype=np.int64)
        if len(slashes):
            run_start = np.ones(len(slashes), dtype=bool)
            run_start[1:] = np.diff(slashes) != 1
            first = np.maximum.accumulate(np.where(run_start, np.arange(len(slashes)), 0))
            k = np.minimum(np.searchsorted(slashes, quotes - 1), len(slashes) - 1)
            hit = slashes[k] == quotes - 1
            kk = k[hit]
            run[hit] = kk - first[kk] + 1 + np.where(slashes[first[kk]] == 0, self.backslashes, 0)
        run[quotes == 0] = self.backslashes
        kind[iq[run % 2 == 1]] = 0




def json_depth(data: bytes, block: int = 1 << 22) -> int:
    """The deepest nesting of arrays and objects in the JSON text ``data`` (UTF-8 bytes), outside
    strings, read ``block`` bytes at a time; it stops counting past :data:`MAX_JSON_DEPTH` (the value
    returned is then above it) or at a closing bracket without an opening one (a parser stops
    there too: the text after the first value is not parsed)."""
    if data.count(b"[") + data.count(b"{") <= MAX_JSON_DEPTH:
        return data.count(b"[") + data.count(b"{")  # an upper bound, and within the limit
    shape = JsonShape()
    view = memoryview(data)
    for lo in range(0, len(data), block):
        if not shape.scan(bytes(view[lo:lo + block]), lines=False):
            break
    return shape.max_depth


class _Shown(reprlib.Repr):
    """``reprlib``'s shortened repr whose integers too long to print (``sys.get_int_max_str_digits``)
    are their number of digits."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 1000:
            return f"<an integer of about {int(x.bit_length() * 0.30103) + 1} digits>"
        return super().repr_int(x, level)


def show(value: Any, limit: int = 80) -> str:
    """``repr(value)`` of parsed input for a message, at most ``limit`` characters: nesting shown to
    4 levels, an integer too long to print as its number of digits (``repr`` itself would recurse
    on deep nesting or refuse such an integer)."""
    shown = _Shown()
    shown.maxlevel, shown.maxstring, shown.maxother, shown.maxlong = 4, limit, limit, limit
    try:
        text = shown.repr(value)
    except (RecursionError, ValueError):
        text = f"<a {type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 3] + "..."
