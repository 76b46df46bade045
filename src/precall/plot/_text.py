"""User strings (file, column and label names, titles) made safe to show.

* :func:`visible`: C0 controls (and DEL) become their Unicode Control Pictures
  (U+2400 + code, e.g. ``\\x01`` -> ``␁``) and the bidirectional formatting
  characters (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C) become
  ``[U+202E]``: nothing can reorder or hide the text around it (Trojan Source,
  CVE-2021-42574), and the reader sees that the name holds such a character.
  Tab and newline are shown as ``␉`` and ``␊`` too: a name is one line.
* :func:`mpl`: :func:`visible`, then every ``$`` escaped, so matplotlib never
  parses a user string as mathtext (``$\\foo$`` is drawn as written, and no
  parse error is raised or logged).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["mpl", "visible"]

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f{_BIDI}]")


def _show(match: re.Match[str]) -> str:
    ch = match.group()
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    return f"[U+{code:04X}]"


def visible(value: Any) -> str:
    """``str(value)`` with C0 controls, DEL and bidi controls replaced visibly."""
    return _UNSAFE.sub(_show, str(value))


def mpl(value: Any) -> str:
    """:func:`visible`, with ``$`` escaped for matplotlib (no mathtext from user strings)."""
    return visible(value).replace("$", r"\$")
