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

import re
from typing import Any

__all__ = ["visible"]

_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)


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
